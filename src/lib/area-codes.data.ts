// Placeholder: replaced by the full table below.
export const AREA_CODE_ZONES_DATA = `
212 America/New_York
415 America/Los_Angeles
`;
