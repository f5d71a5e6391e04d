/**
 * An Etc/GMT zone where the local hour is `hour` right now: contacts in it are inside or outside
 * quiet hours whatever the time of the test run (Etc/GMT-5 is UTC+5).
 */
export function zoneAtLocalHour(hour: number): string {
  let offset = hour - new Date().getUTCHours();
  if (offset < -12) offset += 24;
  if (offset > 14) offset -= 24;
  return offset === 0 ? "Etc/GMT" : offset > 0 ? `Etc/GMT-${offset}` : `Etc/GMT+${-offset}`;
}
