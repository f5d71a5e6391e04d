import { smsShape } from "../../lib/sms-encoding";

/**
 * Characters, encoding and SMS segments of a body as it is typed (GSM-7: 160 in one segment, 153
 * per part; any other character makes it UCS-2: 70, then 67). Merge fields count as typed.
 */
export function SmsCounter({ body }: { body: string }) {
  const shape = smsShape(body);
  const perSegment =
    shape.encoding === "GSM-7" ? (shape.segments > 1 ? 153 : 160) : shape.segments > 1 ? 67 : 70;
  const left = perSegment * shape.segments - shape.units;
  return (
    <span className={`sms-counter ${shape.segments > 1 ? "warn" : "muted"} small`} aria-live="polite">
      {body.length} characters · {shape.encoding} · {shape.segments}{" "}
      {shape.segments === 1 ? "segment" : "segments"} ({left} left in this one)
      {shape.encoding === "UCS-2" &&
        " — a character outside GSM-7 (an emoji, a curly quote…) makes every part shorter"}
    </span>
  );
}
