/** A 10DLC brand and campaign with every field the registry asks for, for tests and scripts/parity. */
export const brandBody = (extra: Record<string, unknown> = {}) => ({
  legal_name: "Sunny Dental LLC",
  ein: "12-3456789",
  entity_type: "PRIVATE_PROFIT",
  vertical: "HEALTHCARE",
  website: "https://sunnydental.example.com",
  email: "owner@sunnydental.example.com",
  phone: "+14155550111",
  address: { street: "12 Main St", city: "San Francisco", state: "CA", postal_code: "94105", country: "US" },
  ...extra,
});

export const campaignBody = (brandId: string, extra: Record<string, unknown> = {}) => ({
  brand_id: brandId,
  use_case: "ACCOUNT_NOTIFICATION",
  description: "Appointment reminders and confirmations for patients of Sunny Dental.",
  message_flow: "Patients opt in by checking a box on the booking form at sunnydental.example.com/book.",
  sample_messages: [
    "Sunny Dental: your cleaning is tomorrow at 10am. Reply STOP to opt out.",
    "Sunny Dental: please confirm your appointment by replying YES. Reply STOP to opt out.",
  ],
  help_message: "Sunny Dental: for help call 415-555-0111 or email help@sunnydental.example.com.",
  optout_message:
    "You are unsubscribed from Sunny Dental messages. Reply START to resubscribe. STOP received.",
  has_embedded_links: false,
  has_embedded_phone: false,
  number_ids: [],
  ...extra,
});
