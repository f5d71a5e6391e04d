// 10DLC and short-code registration (src/compliance/registration.ts): validation messages, the
// carrier preflight and the simulated registry's review, as tables over the pure functions.
import { describe, expect, it } from "bun:test";
import {
  type BrandInput,
  checkBrand,
  checkShortCodeRequest,
  checkTendlcCampaign,
  ENTITY_TYPES,
  type PreflightIssue,
  preflight,
  preflightPassed,
  randomShortCode,
  reviewBrandSimulated,
  reviewCampaignSimulated,
  reviewShortCodeSimulated,
  SHORT_CODE_TYPES,
  type TendlcCampaignInput,
  USE_CASES,
  VERTICALS,
} from "../src/compliance";
import { AppError } from "../src/lib/errors";

/** The validation error `fn` throws (fails the test when it throws nothing or something else). */
function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("validation");
    return (error as AppError).message;
  }
  throw new Error("expected a validation error, nothing was thrown");
}

const goodBrand = {
  legal_name: "Acme Widgets, Inc.",
  ein: "12-3456789",
  entity_type: "PRIVATE_PROFIT",
  vertical: "RETAIL",
  website: "https://acme.example.com",
  email: "compliance@acme.example.com",
  phone: "(415) 555-0134",
  address: { street: "1 Market St", city: "San Francisco", state: "ca", postal_code: "94105", country: "US" },
};

const goodCampaign: TendlcCampaignInput = {
  brand_id: "brand_1",
  use_case: "DELIVERY_NOTIFICATION",
  description: "Shipping and delivery updates for orders placed on the Acme Widgets online store.",
  message_flow:
    "Customers opt in by checking a box on the checkout page of acme.example.com when they place an order.",
  sample_messages: [
    "Acme Widgets: your order #4521 has shipped and arrives Friday. Reply STOP to opt out.",
    "Acme Widgets: your package was delivered today. Questions? Reply HELP. Reply STOP to opt out.",
  ],
  help_message: "Acme Widgets: for help reply HELP or visit our site. Msg & data rates may apply.",
  optout_message: "Acme Widgets: you sent STOP and are unsubscribed. No more messages will be sent.",
  has_embedded_links: false,
  has_embedded_phone: false,
  number_ids: ["num_1", "num_2"],
};

const goodShortCode = {
  type: "vanity",
  vanity_code: "24680",
  use_case: "MARKETING",
  monthly_volume: 50_000,
  sample_messages: ["Acme Widgets: 20% off this weekend. Reply STOP to opt out."],
};

const acme = { legal_name: "Acme Widgets, Inc." };

describe("value sets", () => {
  it("lists the registry's values", () => {
    expect(ENTITY_TYPES).toEqual([
      "PRIVATE_PROFIT",
      "PUBLIC_PROFIT",
      "NON_PROFIT",
      "GOVERNMENT",
      "SOLE_PROPRIETOR",
    ]);
    expect(VERTICALS).toHaveLength(23);
    expect(VERTICALS).toContain("REAL_ESTATE");
    expect(USE_CASES).toHaveLength(18);
    expect(USE_CASES).toContain("2FA");
    expect(SHORT_CODE_TYPES).toEqual(["random", "vanity"]);
  });
});

describe("checkBrand", () => {
  it("accepts a valid brand and normalises it", () => {
    expect(checkBrand(goodBrand)).toEqual({
      legal_name: "Acme Widgets, Inc.",
      ein: "12-3456789",
      entity_type: "PRIVATE_PROFIT",
      vertical: "RETAIL",
      website: "https://acme.example.com",
      email: "compliance@acme.example.com",
      phone: "+14155550134",
      address: {
        street: "1 Market St",
        city: "San Francisco",
        state: "CA",
        postal_code: "94105",
        country: "US",
      },
    } satisfies BrandInput);
  });

  it("accepts a sole proprietor without an EIN, a ZIP+4 and no website", () => {
    const { website: _, ...noWebsite } = goodBrand;
    const brand = checkBrand({
      ...noWebsite,
      entity_type: "SOLE_PROPRIETOR",
      ein: null,
      address: { ...goodBrand.address, postal_code: "94105-1234" },
    });
    expect(brand.ein).toBeNull();
    expect(brand.website).toBeUndefined();
    expect(brand.address.postal_code).toBe("94105-1234");
    expect(checkBrand({ ...goodBrand, entity_type: "SOLE_PROPRIETOR", ein: "" }).ein).toBeNull();
  });

  const rows: [string, Record<string, unknown>, string][] = [
    ["legal_name missing", { legal_name: undefined }, "legal_name is required"],
    ["legal_name blank", { legal_name: "   " }, "legal_name is required"],
    ["legal_name too long", { legal_name: "A".repeat(256) }, "legal_name is too long (max 255)"],
    ["legal_name not a string", { legal_name: 42 }, "legal_name must be a string"],
    ["ein without dash", { ein: "123456789" }, "ein must look like 12-3456789"],
    ["ein too short", { ein: "12-345678" }, "ein must look like 12-3456789"],
    ["ein missing", { ein: null }, "ein is required"],
    [
      "ein on a sole proprietor",
      { entity_type: "SOLE_PROPRIETOR" },
      "ein must be empty for a SOLE_PROPRIETOR brand",
    ],
    [
      "entity_type unknown",
      { entity_type: "LLC" },
      "entity_type must be one of PRIVATE_PROFIT, PUBLIC_PROFIT, NON_PROFIT, GOVERNMENT, SOLE_PROPRIETOR",
    ],
    ["entity_type missing", { entity_type: undefined }, "entity_type is required"],
    ["vertical unknown", { vertical: "SHOES" }, `vertical must be one of ${VERTICALS.join(", ")}`],
    ["website not http", { website: "ftp://acme.example.com" }, "website must be an absolute http(s) URL"],
    ["website relative", { website: "acme.example.com" }, "website must be an absolute http(s) URL"],
    ["email malformed", { email: "acme" }, "email must be a valid email address"],
    ["email missing", { email: undefined }, "email is required"],
    ["phone foreign", { phone: "+44 20 7946 0000" }, "phone must be a US or Canadian phone number"],
    ["phone garbage", { phone: "12" }, "phone must be a valid phone number"],
    ["phone missing", { phone: undefined }, "phone is required"],
    ["address missing", { address: undefined }, "address is required"],
    ["address not an object", { address: "1 Market St" }, "address must be an object"],
    ["address.street blank", { address: { ...goodBrand.address, street: "" } }, "address.street is required"],
    [
      "address.city missing",
      { address: { ...goodBrand.address, city: undefined } },
      "address.city is required",
    ],
    [
      "address.state unknown",
      { address: { ...goodBrand.address, state: "ZZ" } },
      "address.state must be a 2-letter US state code",
    ],
    [
      "address.state a province",
      { address: { ...goodBrand.address, state: "ON" } },
      "address.state must be a 2-letter US state code",
    ],
    [
      "address.postal_code not a ZIP",
      { address: { ...goodBrand.address, postal_code: "M5V 2T6" } },
      "address.postal_code must be a US ZIP code",
    ],
    [
      "address.postal_code 4 digits",
      { address: { ...goodBrand.address, postal_code: "9410" } },
      "address.postal_code must be a US ZIP code",
    ],
    [
      "address.country CA",
      { address: { ...goodBrand.address, country: "CA" } },
      "address.country must be US",
    ],
    [
      "address.country missing",
      { address: { ...goodBrand.address, country: undefined } },
      "address.country is required",
    ],
  ];
  it.each(rows)("%s → 422", (_name, patch, message) => {
    expect(errorOf(() => checkBrand({ ...goodBrand, ...patch }))).toBe(message);
  });

  it("checks only the given fields when partial, each fully", () => {
    expect(checkBrand({}, true)).toEqual({});
    expect(checkBrand({ phone: "415 555 0134" }, true)).toEqual({ phone: "+14155550134" });
    expect(checkBrand({ ein: null }, true)).toEqual({ ein: null });
    expect(checkBrand({ website: null }, true)).toEqual({ website: null });
    expect(errorOf(() => checkBrand({ ein: "nope" }, true))).toBe("ein must look like 12-3456789");
    expect(errorOf(() => checkBrand({ address: { street: "1 Main St" } }, true))).toBe(
      "address.city is required",
    );
    expect(errorOf(() => checkBrand({ entity_type: "PRIVATE_PROFIT", ein: null }, true))).toBe(
      "ein is required",
    );
    expect(errorOf(() => checkBrand({ entity_type: "SOLE_PROPRIETOR", ein: "12-3456789" }, true))).toBe(
      "ein must be empty for a SOLE_PROPRIETOR brand",
    );
    expect(errorOf(() => checkBrand({ legal_name: "" }, true))).toBe("legal_name is required");
  });

  it("refuses a body that is not an object", () => {
    expect(errorOf(() => checkBrand(null))).toBe("body must be an object");
    expect(errorOf(() => checkBrand([]))).toBe("body must be an object");
  });
});

describe("checkTendlcCampaign", () => {
  it("accepts a valid campaign", () => {
    expect(checkTendlcCampaign(goodCampaign)).toEqual(goodCampaign);
    const { number_ids: _, ...noNumbers } = goodCampaign;
    expect(checkTendlcCampaign(noNumbers).number_ids).toEqual([]);
    expect(checkTendlcCampaign({ ...goodCampaign, number_ids: ["n1", "n1", "n2"] }).number_ids).toEqual([
      "n1",
      "n2",
    ]);
  });

  const consent =
    'message_flow must describe how consent is collected (e.g. "Customers opt in by texting JOIN to ... or checking a box on ...")';
  const rows: [string, Record<string, unknown>, string][] = [
    ["brand_id missing", { brand_id: undefined }, "brand_id is required"],
    ["brand_id not a string", { brand_id: 7 }, "brand_id must be a string"],
    ["use_case unknown", { use_case: "PROMO" }, `use_case must be one of ${USE_CASES.join(", ")}`],
    ["description short", { description: "Order updates." }, "description must be at least 40 characters"],
    ["description long", { description: "x".repeat(4097) }, "description is too long (max 4096)"],
    [
      "message_flow short",
      { message_flow: "Customers opt in." },
      "message_flow must be at least 40 characters",
    ],
    [
      "message_flow without consent",
      { message_flow: "We message all of our customers about their orders every single week." },
      consent,
    ],
    [
      "message_flow: 'text messages to' is not a keyword",
      { message_flow: "We send text messages to our customers about the status of their orders." },
      consent,
    ],
    [
      "sample_messages one",
      { sample_messages: [goodCampaign.sample_messages[0]] },
      "sample_messages must have at least 2 messages",
    ],
    [
      "sample_messages six",
      { sample_messages: Array(6).fill(goodCampaign.sample_messages[0]) },
      "sample_messages must have at most 5 messages",
    ],
    [
      "sample_messages not an array",
      { sample_messages: "hello" },
      "sample_messages must be an array of strings",
    ],
    ["sample_messages missing", { sample_messages: undefined }, "sample_messages is required"],
    [
      "sample too short",
      { sample_messages: [goodCampaign.sample_messages[0], "Reply STOP"] },
      "sample_messages[1] must be at least 20 characters",
    ],
    [
      "sample too long",
      { sample_messages: ["x".repeat(1025), goodCampaign.sample_messages[0]] },
      "sample_messages[0] is too long (max 1024)",
    ],
    ["sample not a string", { sample_messages: [1, 2] }, "sample_messages[0] must be a string"],
    ["help_message short", { help_message: "Call us." }, "help_message must be at least 20 characters"],
    [
      "help_message without a way to get help",
      { help_message: "Thanks for being a loyal customer of ours!" },
      "help_message must say how to get help (mention HELP, a phone number, an email or a URL)",
    ],
    [
      "optout_message without STOP",
      { optout_message: "You are unsubscribed now." },
      "optout_message must mention STOP",
    ],
    [
      "optout_message STOPPED is not STOP",
      { optout_message: "Messages STOPPED for good." },
      "optout_message must mention STOP",
    ],
    ["optout_message missing", { optout_message: undefined }, "optout_message is required"],
    ["has_embedded_links not boolean", { has_embedded_links: "yes" }, "has_embedded_links must be a boolean"],
    ["has_embedded_links missing", { has_embedded_links: undefined }, "has_embedded_links is required"],
    ["has_embedded_phone not boolean", { has_embedded_phone: 0 }, "has_embedded_phone must be a boolean"],
    ["number_ids not an array", { number_ids: "num_1" }, "number_ids must be an array of strings"],
    ["number_ids element not a string", { number_ids: ["num_1", 2] }, "number_ids[1] must be a string"],
  ];
  it.each(rows)("%s → 422", (_name, patch, message) => {
    expect(errorOf(() => checkTendlcCampaign({ ...goodCampaign, ...patch }))).toBe(message);
  });

  const flows = [
    "Customers opt-in on the account settings page of our website before any message.",
    "Customers text JOIN to 12345 to receive shipping updates about their orders.",
    "Customers texting START to 12345 agree to receive delivery updates by SMS.",
    "Customers sign up for delivery updates at checkout on acme.example.com each time.",
    "Customers give consent when they create an account on our website or mobile app.",
    "Customers fill in the web form at acme.example.com/sms to receive delivery updates.",
    "Customers subscribe in the mobile app settings screen to get delivery updates.",
    "Customers tick the checkbox on the checkout page to get delivery updates by SMS.",
  ];
  it.each(flows)("accepts the consent description %p", (message_flow) => {
    expect(checkTendlcCampaign({ ...goodCampaign, message_flow }).message_flow).toBe(message_flow);
  });

  const helps = [
    "Questions? Call 1-800-555-0199 any time of the day.",
    "Questions? Write to care@acme.example.com any time.",
    "Questions? Visit https://acme.example.com/care any time.",
    "Acme Widgets customer support: reply with your question.",
  ];
  it.each(helps)("accepts the help message %p", (help_message) => {
    expect(checkTendlcCampaign({ ...goodCampaign, help_message }).help_message).toBe(help_message);
  });

  it("checks only the given fields when partial", () => {
    expect(checkTendlcCampaign({}, true)).toEqual({});
    expect(checkTendlcCampaign({ use_case: "MARKETING" }, true)).toEqual({ use_case: "MARKETING" });
    expect(
      errorOf(() => checkTendlcCampaign({ sample_messages: ["Acme Widgets: hello there, friend!"] }, true)),
    ).toBe("sample_messages must have at least 2 messages");
    expect(errorOf(() => checkTendlcCampaign({ optout_message: "Bye for now, friend." }, true))).toBe(
      "optout_message must mention STOP",
    );
  });
});

describe("checkShortCodeRequest", () => {
  it("accepts valid requests", () => {
    expect(checkShortCodeRequest(goodShortCode)).toEqual(goodShortCode as never);
    const random = checkShortCodeRequest({ ...goodShortCode, type: "random", vanity_code: undefined });
    expect(random.type).toBe("random");
    expect(random.vanity_code).toBeNull();
    expect(checkShortCodeRequest({ ...goodShortCode, vanity_code: "246802" }).vanity_code).toBe("246802");
  });

  const rows: [string, Record<string, unknown>, string][] = [
    ["type unknown", { type: "premium" }, "type must be one of random, vanity"],
    ["vanity without a code", { vanity_code: undefined }, "vanity_code is required for a vanity short code"],
    ["vanity code 4 digits", { vanity_code: "2468" }, "vanity_code must be 5 or 6 digits"],
    ["vanity code 7 digits", { vanity_code: "2468024" }, "vanity_code must be 5 or 6 digits"],
    ["vanity code letters", { vanity_code: "24A80" }, "vanity_code must be 5 or 6 digits"],
    ["random with a code", { type: "random" }, "vanity_code must be empty for a random short code"],
    ["use_case unknown", { use_case: "SPAM" }, `use_case must be one of ${USE_CASES.join(", ")}`],
    [
      "monthly_volume zero",
      { monthly_volume: 0 },
      "monthly_volume must be an integer between 1 and 1000000000",
    ],
    [
      "monthly_volume fraction",
      { monthly_volume: 1.5 },
      "monthly_volume must be an integer between 1 and 1000000000",
    ],
    [
      "monthly_volume a string",
      { monthly_volume: "100" },
      "monthly_volume must be an integer between 1 and 1000000000",
    ],
    [
      "monthly_volume past 32 bits",
      { monthly_volume: 2147483648 },
      "monthly_volume must be an integer between 1 and 1000000000",
    ],
    ["monthly_volume missing", { monthly_volume: undefined }, "monthly_volume is required"],
    ["sample_messages empty", { sample_messages: [] }, "sample_messages must have at least 1 message"],
    [
      "sample_messages six",
      { sample_messages: Array(6).fill("Acme Widgets: hello") },
      "sample_messages must have at most 5 messages",
    ],
    ["sample blank", { sample_messages: ["  "] }, "sample_messages[0] is required"],
  ];
  it.each(rows)("%s → 422", (_name, patch, message) => {
    expect(errorOf(() => checkShortCodeRequest({ ...goodShortCode, ...patch }))).toBe(message);
  });

  it("checks only the given fields when partial", () => {
    expect(checkShortCodeRequest({ monthly_volume: 10 }, true)).toEqual({ monthly_volume: 10 });
    expect(errorOf(() => checkShortCodeRequest({ vanity_code: "12" }, true))).toBe(
      "vanity_code must be 5 or 6 digits",
    );
  });
});

/** Issues as [field, code, severity] triples: compact tables. */
const brief = (issues: PreflightIssue[]) => issues.map((i) => [i.field, i.code, i.severity]);

const S0 = "Acme Widgets: your order #4521 has shipped and arrives Friday. Reply STOP to opt out.";
const S1 = "Acme Widgets: your package was delivered today. Questions? Reply HELP.";

describe("preflight", () => {
  it("finds nothing wrong with a good campaign", () => {
    const issues = preflight(goodCampaign, acme);
    expect(issues).toEqual([]);
    expect(preflightPassed(issues)).toBe(true);
  });

  describe("with the workspace's verified link domains", () => {
    // Written in capitals, as people write a brand: the bare-domain pattern alone does not see a link.
    const BRANDED = "Acme Widgets: track it at GO.ACMEWIDGETS.COM/T/1 today.";
    const cases: [string, Partial<TendlcCampaignInput>, string[], string[][]][] = [
      [
        "an undeclared link on the domain",
        { sample_messages: [S0, BRANDED] },
        ["go.acmewidgets.com"],
        [["sample_messages[1]", "embedded_link_mismatch", "error"]],
      ],
      [
        "a declared link on the domain",
        { has_embedded_links: true, sample_messages: [S0, BRANDED] },
        ["go.acmewidgets.com"],
        [],
      ],
      [
        "a declared link with a scheme",
        {
          has_embedded_links: true,
          sample_messages: [S0, "Acme Widgets: see HTTPS://GO.ACMEWIDGETS.COM/T/1"],
        },
        ["go.acmewidgets.com"],
        [],
      ],
      [
        "the same text without the domain",
        { has_embedded_links: true, sample_messages: [S0, BRANDED] },
        [],
        [["has_embedded_links", "embedded_link_mismatch", "warning"]],
      ],
      [
        "a longer name that only contains the domain",
        {
          has_embedded_links: true,
          sample_messages: [S0, "Acme Widgets: see GO.ACMEWIDGETS.COM-X now."],
        },
        ["go.acmewidgets.com"],
        [["has_embedded_links", "embedded_link_mismatch", "warning"]],
      ],
    ];
    for (const [name, patch, domains, expected] of cases) {
      it(`checks has_embedded_links against ${name}`, () => {
        const issues = preflight({ ...goodCampaign, ...patch }, acme, domains).map((i) => [
          i.field,
          i.code,
          i.severity,
        ]);
        expect({ name, issues }).toEqual({ name, issues: expected });
      });
    }
  });

  type Row = [string, Partial<TendlcCampaignInput>, string[][]];
  const rows: Row[] = [
    [
      "sample without the brand name",
      { sample_messages: [S0, "Your package was delivered today. Reply STOP to opt out."] },
      [["sample_messages[1]", "brand_name_missing", "error"]],
    ],
    [
      "no opt-out wording anywhere",
      { sample_messages: [S1, S1] },
      [["sample_messages", "opt_out_missing", "error"]],
    ],
    [
      "public URL shortener (declared link)",
      { has_embedded_links: true, sample_messages: [S0, "Acme Widgets: track it at bit.ly/3xYz now."] },
      [["sample_messages[1]", "public_url_shortener", "error"]],
    ],
    [
      "undeclared bare-domain link",
      { sample_messages: [S0, "Acme Widgets: track it at acme.example.com/track now."] },
      [["sample_messages[1]", "embedded_link_mismatch", "error"]],
    ],
    [
      "undeclared http link",
      { sample_messages: ["Acme Widgets: see https://acme.example.com. Reply STOP to opt out.", S1] },
      [["sample_messages[0]", "embedded_link_mismatch", "error"]],
    ],
    [
      "undeclared {{offer_url}} link",
      { sample_messages: [S0, "Acme Widgets: your receipt is at {{offer_url}}"] },
      [["sample_messages[1]", "embedded_link_mismatch", "error"]],
    ],
    [
      "declared links but none in the samples",
      { has_embedded_links: true },
      [["has_embedded_links", "embedded_link_mismatch", "warning"]],
    ],
    [
      "undeclared phone number",
      { sample_messages: [S0, "Acme Widgets: questions? Call (415) 555-0134 today."] },
      [["sample_messages[1]", "embedded_phone_mismatch", "error"]],
    ],
    [
      "undeclared +1 phone number",
      { sample_messages: [S0, "Acme Widgets: questions? Call +1 415.555.0134 today."] },
      [["sample_messages[1]", "embedded_phone_mismatch", "error"]],
    ],
    [
      "declared phone but none in the samples",
      { has_embedded_phone: true },
      [["has_embedded_phone", "embedded_phone_mismatch", "warning"]],
    ],
    [
      "SHAFT content",
      { sample_messages: [S0, "Acme Widgets: your wine club box has shipped."] },
      [["sample_messages[1]", "shaft_content", "error"]],
    ],
    [
      "marketing samples on a notification use case",
      {
        use_case: "ACCOUNT_NOTIFICATION",
        sample_messages: [S0, "Acme Widgets: 20% off everything this weekend!"],
      },
      [["use_case", "use_case_mismatch", "warning"]],
    ],
    [
      "coupon on customer care",
      {
        use_case: "CUSTOMER_CARE",
        sample_messages: [S0, "Acme Widgets: here is a coupon for your trouble."],
      },
      [["use_case", "use_case_mismatch", "warning"]],
    ],
    [
      "2FA without a code",
      {
        use_case: "2FA",
        sample_messages: [
          "Acme Widgets: your order has shipped. Reply STOP to opt out.",
          "Acme Widgets: code ready.",
        ],
      },
      [["use_case", "use_case_mismatch", "warning"]],
    ],
    [
      "2FA whose only digits are a phone number",
      {
        use_case: "2FA",
        has_embedded_phone: true,
        sample_messages: [
          "Acme Widgets: your sign-in code is ready. Reply STOP to opt out.",
          "Acme Widgets: not you? Call 415-555-0134.",
        ],
      },
      [["use_case", "use_case_mismatch", "warning"]],
    ],
    // Nothing to report:
    [
      "2FA with a code",
      {
        use_case: "2FA",
        sample_messages: [S0, "Acme Widgets: your code is 482913. It expires in 10 minutes."],
      },
      [],
    ],
    [
      "marketing samples on MARKETING",
      { use_case: "MARKETING", sample_messages: [S0, "Acme Widgets: 20% off now!"] },
      [],
    ],
    [
      "declared link present",
      { has_embedded_links: true, sample_messages: [S0, "Acme Widgets: track it at acme.example.com/t/1"] },
      [],
    ],
    [
      "an email address is not a link",
      { sample_messages: [S0, "Acme Widgets: write to care@acme.example.com"] },
      [],
    ],
    [
      "no space after a full stop is not a link",
      { sample_messages: [S0, "Acme Widgets: thanks for shopping.Reply HELP"] },
      [],
    ],
    [
      "brand name in capitals",
      { sample_messages: [S0, "ACME WIDGETS: your package was delivered today."] },
      [],
    ],
    [
      "brand name with its suffix",
      { sample_messages: [S0, "Acme Widgets Inc.: your package arrived today."] },
      [],
    ],
    [
      "an order number is not a phone number",
      { sample_messages: [S0, "Acme Widgets: order 4521-88 was delivered."] },
      [],
    ],
  ];
  it.each(rows)("%s", (_name, patch, expected) => {
    expect(brief(preflight({ ...goodCampaign, ...patch }, acme))).toEqual(expected);
  });

  it("accepts the DBA name and skips the brand check without a brand", () => {
    const samples = [
      "Widgetry: your order shipped today. Reply STOP to opt out.",
      "Widgetry: your package arrived.",
    ];
    const campaign = { ...goodCampaign, sample_messages: samples };
    expect(preflight(campaign, { legal_name: "Acme Widgets LLC", dba_name: "Widgetry" })).toEqual([]);
    expect(brief(preflight(campaign, { legal_name: "Acme Widgets LLC" }))).toEqual([
      ["sample_messages[0]", "brand_name_missing", "error"],
      ["sample_messages[1]", "brand_name_missing", "error"],
    ]);
    expect(preflight(campaign, null)).toEqual([]);
  });

  it("orders issues by field then code, deterministically", () => {
    const campaign: TendlcCampaignInput = {
      ...goodCampaign,
      use_case: "2FA",
      has_embedded_links: false,
      has_embedded_phone: true,
      sample_messages: [
        "Big sale today, buy a rifle at bit.ly/x or see example.com/y",
        "Hello from the team at the store: have a nice day!",
      ],
    };
    const expected = [
      ["has_embedded_phone", "embedded_phone_mismatch", "warning"],
      ["sample_messages", "opt_out_missing", "error"],
      ["sample_messages[0]", "brand_name_missing", "error"],
      ["sample_messages[0]", "embedded_link_mismatch", "error"],
      ["sample_messages[0]", "public_url_shortener", "error"],
      ["sample_messages[0]", "shaft_content", "error"],
      ["sample_messages[1]", "brand_name_missing", "error"],
      ["use_case", "use_case_mismatch", "warning"],
      ["use_case", "use_case_mismatch", "warning"],
    ];
    const first = preflight(campaign, acme);
    expect(brief(first)).toEqual(expected);
    expect(preflight(campaign, acme)).toEqual(first);
    expect(first[7].message).toContain("use MARKETING or MIXED");
    expect(first[8].message).toContain("no sample message contains a code");
    expect(first[4].message).toContain("bit.ly");
    expect(first[4].message).toContain("30963");
    expect(preflightPassed(first)).toBe(false);
  });

  it("passes with warnings only", () => {
    const issues = preflight({ ...goodCampaign, has_embedded_links: true }, acme);
    expect(issues).toHaveLength(1);
    expect(preflightPassed(issues)).toBe(true);
  });
});

describe("reviewBrandSimulated", () => {
  const rows: [string, { legal_name: string; ein?: string | null }, string, string[]][] = [
    ["a normal brand", { legal_name: "Acme Widgets, Inc.", ein: "12-3456789" }, "VERIFIED", []],
    [
      "EIN of zeros",
      { legal_name: "Acme Widgets, Inc.", ein: "00-0000000" },
      "FAILED",
      ["EIN 00-0000000 is not an issued EIN"],
    ],
    [
      "EIN starting with 99",
      { legal_name: "Acme Widgets, Inc.", ein: "99-1234567" },
      "UNVERIFIED",
      ["The legal name does not match the IRS record for this EIN"],
    ],
    [
      "'test' in the legal name",
      { legal_name: "Acme TEST Widgets", ein: "12-3456789" },
      "UNVERIFIED",
      ["The brand looks like a test registration"],
    ],
    [
      "both",
      { legal_name: "Test Co", ein: "99-0000001" },
      "UNVERIFIED",
      [
        "The legal name does not match the IRS record for this EIN",
        "The brand looks like a test registration",
      ],
    ],
    ["'test' inside a word", { legal_name: "Contest Testing Co", ein: "12-3456789" }, "VERIFIED", []],
    ["a sole proprietor without EIN", { legal_name: "Jane Doe", ein: null }, "VERIFIED", []],
  ];
  it.each(rows)("%s", (_name, brand, status, reasons) => {
    expect(reviewBrandSimulated(brand)).toEqual({ status: status as never, reasons });
  });
});

describe("reviewCampaignSimulated", () => {
  it.each(["UNVERIFIED", "FAILED", "PENDING"])("rejects a campaign of a %s brand", (status) => {
    expect(reviewCampaignSimulated(goodCampaign, { ...acme, status })).toEqual({
      status: "REJECTED",
      reasons: [`The brand is ${status}: only verified brands can register campaigns`],
    });
  });

  it("approves a good campaign of a verified brand, warnings or not", () => {
    const verified = { ...acme, status: "VERIFIED" };
    expect(reviewCampaignSimulated(goodCampaign, verified)).toEqual({ status: "APPROVED", reasons: [] });
    expect(reviewCampaignSimulated({ ...goodCampaign, has_embedded_links: true }, verified)).toEqual({
      status: "APPROVED",
      reasons: [],
    });
  });

  it("rejects with each preflight error's message", () => {
    const campaign = { ...goodCampaign, sample_messages: [S1, "Your package was delivered today, friend."] };
    const errors = preflight(campaign, acme).filter((i) => i.severity === "error");
    expect(errors.map((e) => e.code)).toEqual(["opt_out_missing", "brand_name_missing"]);
    expect(reviewCampaignSimulated(campaign, { ...acme, status: "VERIFIED" })).toEqual({
      status: "REJECTED",
      reasons: errors.map((e) => e.message),
    });
  });
});

describe("reviewShortCodeSimulated", () => {
  const request = { ...goodShortCode, type: "vanity" as const, use_case: "MARKETING" as const };

  it("approves a free vanity code with that code", () => {
    expect(reviewShortCodeSimulated(request, "req_1")).toEqual({
      status: "approved",
      reasons: [],
      short_code: "24680",
    });
  });

  it.each(["12345", "11111", "55555"])("rejects the leased vanity code %s", (vanity_code) => {
    expect(reviewShortCodeSimulated({ ...request, vanity_code }, "req_1")).toEqual({
      status: "rejected",
      reasons: [`Vanity code ${vanity_code} is already leased`],
    });
  });

  it("rejects samples with a public shortener or SHAFT content", () => {
    const shortener = reviewShortCodeSimulated(
      { ...request, sample_messages: ["Acme: 20% off at bit.ly/deal. Reply STOP"] },
      "req_1",
    );
    expect(shortener.status).toBe("rejected");
    expect(shortener.short_code).toBeUndefined();
    expect(shortener.reasons).toHaveLength(1);
    expect(shortener.reasons[0]).toStartWith("Sample message 1: bit.ly is a public URL shortener");

    const shaft = reviewShortCodeSimulated(
      { ...request, sample_messages: ["Acme: hello there", "Acme: cigars 2 for 1. Reply STOP"] },
      "req_1",
    );
    expect(shaft.status).toBe("rejected");
    expect(shaft.reasons).toHaveLength(1);
    expect(shaft.reasons[0]).toStartWith("Sample message 2: Mentions tobacco");
  });

  it("gives a random request a deterministic 5-digit code from the seed", () => {
    const random = { ...request, type: "random" as const, vanity_code: null };
    const first = reviewShortCodeSimulated(random, "req_1");
    expect(first).toEqual({ status: "approved", reasons: [], short_code: "63341" });
    expect(reviewShortCodeSimulated(random, "req_1")).toEqual(first);
    expect(randomShortCode("req_2")).toBe("41863");

    const codes = Array.from({ length: 200 }, (_, i) => randomShortCode(`seed-${i}`));
    for (const code of codes) {
      expect(code).toMatch(/^[2-9]\d{4}$/);
      expect(["12345", "11111", "55555"]).not.toContain(code);
    }
    expect(new Set(codes).size).toBeGreaterThan(190);
    expect(new Set(codes.map((c) => c[0])).size).toBe(8);
  });
});
