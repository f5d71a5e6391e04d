/**
 * NANP area code -> where its numbers are: country (ISO 3166-1), the US state or territory / the
 * Canadian province or territory ("-" for the Caribbean and Atlantic countries that have a whole
 * area code each), and the time zones the area code spans *besides* its zone in area-codes.data.ts.
 *
 * Source: NANPA's area code assignments by location (nationalnanpa.com, "NPAs by location"),
 * overlays included up to 2025 (e.g. 235 MO, 327 AR, 363 NY, 448 FL, 557 MO, 624 NY, 656 FL,
 * 728 FL, 861 IL, 943 GA, 948 VA; Canada 257, 263, 354, 368, 382, 428, 468, 474, 584, 683, 742,
 * 753, 879, 942). Every area code of area-codes.data.ts has a line (a test checks it).
 *
 * Other zones: an area code that crosses a time zone boundary (49 CFR Part 71 for the US) lists
 * the zones of its other parts, so send-time rules can require the window in all of them (fail
 * closed): e.g. 850 (Florida panhandle, Eastern and Central), 270/364 and 606 (Kentucky), 219,
 * 574, 812/930 (Indiana), 423 and 931 (Tennessee), 906 (Michigan's Upper Peninsula), 208/986
 * (north Idaho is Pacific), 541/458 (Malheur County, Oregon, is Mountain), 605, 701, 308, 620,
 * 785 (the Mountain parts of the Dakotas, Nebraska, Kansas), 432 (Culberson County, Texas), 775
 * (West Wendover, Nevada), 928 (the Navajo Nation keeps DST), 334 (Phenix City keeps Eastern time
 * by custom), 907 (the Aleutians), 250/236/257/672 (the Kootenays and Peace River, British
 * Columbia), 306/639/474 (Lloydminster keeps Alberta time), 418/581/367 (Magdalen Islands,
 * Atlantic), 709/879 (Labrador, Atlantic), 807 (north-western Ontario, Central), 867 (Yukon, the
 * Northwest Territories and Nunavut). Zones Google libphonenumber's time zone map lists for an area
 * code or any of its exchanges are all here too (test/area-code-zones.test.ts), even where NANPA
 * places the area code in one zone (689, 474, 907's Honolulu): an extra zone only delays a send.
 *
 * One line per area code: "<area code> <country> <region[,region]|-> [<other zone> ...]".
 */
export const AREA_CODE_REGIONS_DATA = `
201 US NJ
202 US DC
203 US CT
204 CA MB
205 US AL
206 US WA
207 US ME
208 US ID America/Los_Angeles
209 US CA
210 US TX
212 US NY
213 US CA
214 US TX
215 US PA
216 US OH
217 US IL
218 US MN
219 US IN America/Chicago
220 US OH
223 US PA
224 US IL
225 US LA
226 CA ON
227 US MD
228 US MS
229 US GA
231 US MI
234 US OH
235 US MO
236 CA BC America/Edmonton America/Dawson_Creek
239 US FL
240 US MD
242 BS -
246 BB -
248 US MI
249 CA ON
250 CA BC America/Edmonton America/Dawson_Creek
251 US AL
252 US NC
253 US WA
254 US TX
256 US AL
257 CA BC America/Edmonton America/Dawson_Creek
260 US IN
262 US WI
263 CA QC
264 AI -
267 US PA
268 AG -
269 US MI
270 US KY America/Chicago
272 US PA
274 US WI
276 US VA
279 US CA
281 US TX
283 US OH
284 VG -
289 CA ON
301 US MD
302 US DE
303 US CO
304 US WV
305 US FL
306 CA SK America/Edmonton
307 US WY
308 US NE America/Denver
309 US IL
310 US CA
312 US IL
313 US MI
314 US MO
315 US NY
316 US KS
317 US IN
318 US LA
319 US IA
320 US MN
321 US FL
323 US CA
324 US FL
325 US TX
326 US OH
327 US AR
329 US NY
330 US OH
331 US IL
332 US NY
334 US AL America/New_York
336 US NC
337 US LA
339 US MA
340 US VI
341 US CA
343 CA ON
345 KY -
346 US TX
347 US NY
350 US CA
351 US MA
352 US FL
353 US WI
354 CA QC
360 US WA
361 US TX
363 US NY
364 US KY America/Chicago
365 CA ON
367 CA QC America/Halifax
368 CA AB
369 US CA
380 US OH
382 CA ON
385 US UT
386 US FL
401 US RI
402 US NE
403 CA AB
404 US GA
405 US OK
406 US MT
407 US FL
408 US CA
409 US TX
410 US MD
412 US PA
413 US MA
414 US WI
415 US CA
416 CA ON
417 US MO
418 CA QC America/Halifax
419 US OH
423 US TN America/New_York
424 US CA
425 US WA
428 CA NB
430 US TX
431 CA MB
432 US TX America/Denver
434 US VA
435 US UT
437 CA ON
438 CA QC
440 US OH
441 BM -
442 US CA
443 US MD
445 US PA
447 US IL
448 US FL America/Chicago
450 CA QC
458 US OR America/Boise
463 US IN
464 US IL
468 CA QC
469 US TX
470 US GA
472 US NC
473 GD -
474 CA SK America/Edmonton America/Winnipeg
475 US CT
478 US GA
479 US AR
480 US AZ
484 US PA
501 US AR
502 US KY
503 US OR
504 US LA
505 US NM
506 CA NB
507 US MN
508 US MA
509 US WA
510 US CA
512 US TX
513 US OH
514 CA QC
515 US IA
516 US NY
517 US MI
518 US NY
519 CA ON
520 US AZ
530 US CA
531 US NE
534 US WI
539 US OK
540 US VA
541 US OR America/Boise
548 CA ON
551 US NJ
557 US MO
559 US CA
561 US FL
562 US CA
563 US IA
564 US WA
567 US OH
570 US PA
571 US VA
572 US OK
573 US MO
574 US IN America/Chicago
575 US NM
579 CA QC
580 US OK
581 CA QC America/Halifax
582 US PA
584 CA MB
585 US NY
586 US MI
587 CA AB
601 US MS
602 US AZ
603 US NH
604 CA BC
605 US SD America/Denver
606 US KY America/Chicago
607 US NY
608 US WI
609 US NJ
610 US PA
612 US MN
613 CA ON
614 US OH
615 US TN
616 US MI
617 US MA
618 US IL
619 US CA
620 US KS America/Denver
623 US AZ
624 US NY
626 US CA
628 US CA
629 US TN
630 US IL
631 US NY
636 US MO
639 CA SK America/Edmonton
640 US NJ
641 US IA
645 US FL
646 US NY
647 CA ON
649 TC -
650 US CA
651 US MN
656 US FL
657 US CA
658 JM -
659 US AL
660 US MO
661 US CA
662 US MS
664 MS -
667 US MD
669 US CA
670 US MP
671 US GU
672 CA BC America/Edmonton America/Dawson_Creek
678 US GA
680 US NY
681 US WV
682 US TX
683 CA ON
684 US AS
686 US VA
689 US FL America/Chicago
701 US ND America/Denver
702 US NV
703 US VA
704 US NC
705 CA ON
706 US GA
707 US CA
708 US IL
709 CA NL America/Halifax America/Puerto_Rico
712 US IA
713 US TX
714 US CA
715 US WI
716 US NY
717 US PA
718 US NY
719 US CO
720 US CO
721 SX -
724 US PA
725 US NV
726 US TX
727 US FL
728 US FL
730 US IL
731 US TN
732 US NJ
734 US MI
737 US TX
738 US CA
740 US OH
742 CA ON
743 US NC
747 US CA
748 US CO
753 CA ON
754 US FL
757 US VA
758 LC -
760 US CA
762 US GA
763 US MN
765 US IN
767 DM -
769 US MS
770 US GA
771 US DC
772 US FL
773 US IL
774 US MA
775 US NV America/Denver
778 CA BC
779 US IL
780 CA AB
781 US MA
782 CA NS,PE
784 VC -
785 US KS America/Denver
786 US FL
787 US PR
801 US UT
802 US VT
803 US SC
804 US VA
805 US CA
806 US TX
807 CA ON America/Winnipeg
808 US HI
809 DO -
810 US MI
812 US IN America/Chicago
813 US FL
814 US PA
815 US IL
816 US MO
817 US TX
818 US CA
819 CA QC
820 US CA
821 US SC
825 CA AB
826 US VA
828 US NC
829 DO -
830 US TX
831 US CA
832 US TX
835 US PA
838 US NY
839 US SC
840 US CA
843 US SC
845 US NY
847 US IL
848 US NJ
849 DO -
850 US FL America/Chicago
854 US SC
856 US NJ
857 US MA
858 US CA
859 US KY
860 US CT
861 US IL
862 US NJ
863 US FL
864 US SC
865 US TN
867 CA YT,NT,NU America/Edmonton America/Winnipeg America/Toronto America/Vancouver
868 TT -
869 KN -
870 US AR
872 US IL
873 CA QC
876 JM -
878 US PA
879 CA NL America/Halifax America/Puerto_Rico
901 US TN
902 CA NS,PE
903 US TX
904 US FL
905 CA ON
906 US MI America/Chicago
907 US AK America/Adak Pacific/Honolulu
908 US NJ
909 US CA
910 US NC
912 US GA
913 US KS
914 US NY
915 US TX
916 US CA
917 US NY
918 US OK
919 US NC
920 US WI
925 US CA
928 US AZ America/Denver
929 US NY
930 US IN America/Chicago
931 US TN America/New_York
934 US NY
936 US TX
937 US OH
938 US AL
939 US PR
940 US TX
941 US FL
942 CA ON
943 US GA
945 US TX
947 US MI
948 US VA
949 US CA
951 US CA
952 US MN
954 US FL
956 US TX
959 US CT
970 US CO
971 US OR
972 US TX
973 US NJ
975 US MO
978 US MA
979 US TX
980 US NC
983 US CO
984 US NC
985 US LA
986 US ID America/Los_Angeles
989 US MI
`;
