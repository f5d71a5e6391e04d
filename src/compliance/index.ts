/**
 * Send-time compliance (API.md §6.1): one pure answer to "send now, defer until T, or skip why",
 * shared by campaigns, flows, agent follow-ups and voice campaigns, and by their previews. Knows
 * nothing about any of them: plain data and a clock in, plain data out.
 */
export {
  type Channel,
  capLookbackMs,
  DEFAULT_FREQUENCY_CAP,
  DEFAULT_QUIET_HOURS,
  type DeferReason,
  decideSend,
  type FrequencyCap,
  nextAllowedAt,
  type QuietHours,
  type SendDecision,
  type SendInput,
  type SendKind,
  SKIP_REASONS,
  type SkipReason,
  STATE_CODES,
  type WindowInput,
} from "./decide";
export { HolidayCalendar, holidayIn, usFederalHolidays } from "./holidays";
export {
  DEFAULT_MERGE_FIELDS,
  type LintCode,
  type LintOptions,
  type LintWarning,
  lintContent,
  PUBLIC_URL_SHORTENERS,
  SHAFT_WORDS,
} from "./lint";
export { type LocalTime, localTimeFor, NANP_FALLBACK_ZONES } from "./local-time";
export {
  type BrandAddress,
  type BrandInput,
  type BrandReviewStatus,
  checkBrand,
  checkShortCodeRequest,
  checkTendlcCampaign,
  ENTITY_TYPES,
  type EntityType,
  LEASED_VANITY_CODES,
  type PreflightCode,
  type PreflightIssue,
  preflight,
  preflightPassed,
  randomShortCode,
  reviewBrandSimulated,
  reviewCampaignSimulated,
  reviewShortCodeSimulated,
  SHORT_CODE_TYPES,
  type ShortCodeRequestInput,
  type ShortCodeType,
  type TendlcCampaignInput,
  US_STATE_CODES,
  USE_CASES,
  type UseCase,
  VERTICALS,
  type Vertical,
} from "./registration";
export { isUsLocalNumber, TOLL_FREE_AREA_CODES, unregisteredSender } from "./sender";
export { STATE_RULES, type StateRule } from "./state-rules";
export type { WindowAnswer } from "./windows";
