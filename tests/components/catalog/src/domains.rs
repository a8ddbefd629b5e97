//! The generated catalog: 100 business domains × 10 actions = 1,000 tools
//! with realistic names, descriptions and parameters. Deterministic: the
//! same domain number always gives the same ten tools. Shared by the
//! `catalog` component (which lists one domain's tools) and
//! `toolhost-bench` (which writes the config and checks its queries'
//! expected answers exist).

/// One domain: the object's name (snake case) and its words, its plural
/// (snake case), the system that keeps it, and what a record holds.
pub struct Domain {
    /// `expense_report`.
    pub noun: &'static str,
    /// `expense_reports`.
    pub plural: &'static str,
    /// `the finance system`.
    pub system: &'static str,
    /// `amounts, receipts, cost center and approver`.
    pub details: &'static str,
}

/// Shorthand for a table row.
const fn d(
    noun: &'static str,
    plural: &'static str,
    system: &'static str,
    details: &'static str,
) -> Domain {
    Domain {
        noun,
        plural,
        system,
        details,
    }
}

/// The 100 domains, in a fixed order (the component's `domain` value is an
/// index into it).
pub const DOMAINS: [Domain; 100] = [
    d(
        "invoice",
        "invoices",
        "billing",
        "amount due, due date, customer and line items",
    ),
    d(
        "payment",
        "payments",
        "the payments ledger",
        "amount, payer, card or bank transfer method and settlement date",
    ),
    d(
        "refund",
        "refunds",
        "billing",
        "refunded amount, original charge and reason",
    ),
    d(
        "subscription",
        "subscriptions",
        "billing",
        "plan, renewal date, seats and billing cycle",
    ),
    d(
        "quote",
        "quotes",
        "sales",
        "quoted prices, discount, validity date and prospect",
    ),
    d(
        "sales_order",
        "sales_orders",
        "the order desk",
        "ordered products, quantities, shipping address and order status",
    ),
    d(
        "purchase_order",
        "purchase_orders",
        "procurement",
        "supplier, ordered items, unit prices and expected arrival",
    ),
    d(
        "supplier",
        "suppliers",
        "procurement",
        "vendor name, payment terms, contact person and rating",
    ),
    d(
        "contract",
        "contracts",
        "the legal repository",
        "parties, start and end dates, renewal terms and clauses",
    ),
    d(
        "customer",
        "customers",
        "the CRM",
        "company name, account owner, industry and lifetime value",
    ),
    d(
        "lead",
        "leads",
        "the CRM",
        "prospect name, source, score and qualification stage",
    ),
    d(
        "opportunity",
        "opportunities",
        "the CRM",
        "sales deal: deal value, pipeline stage, close date and probability",
    ),
    d(
        "contact",
        "contacts",
        "the CRM",
        "person's name, email, phone number and employer",
    ),
    d(
        "campaign",
        "campaigns",
        "marketing",
        "channel, audience segment, budget and launch date",
    ),
    d(
        "email_template",
        "email_templates",
        "marketing",
        "subject line, body text, sender and language",
    ),
    d(
        "newsletter",
        "newsletters",
        "marketing",
        "issue title, articles, subscriber list and send time",
    ),
    d(
        "coupon",
        "coupons",
        "marketing",
        "discount code, percentage off, expiry and usage limit",
    ),
    d(
        "product",
        "products",
        "the product catalog",
        "SKU, product name, price and category",
    ),
    d(
        "price_list",
        "price_lists",
        "the product catalog",
        "currency, customer tier and per-product prices",
    ),
    d(
        "inventory_item",
        "inventory_items",
        "the warehouse",
        "stock level, bin location, reorder point and SKU",
    ),
    d(
        "warehouse",
        "warehouses",
        "logistics",
        "site address, capacity, opening hours and manager",
    ),
    d(
        "shipment",
        "shipments",
        "logistics",
        "tracking number, carrier, parcels and delivery address",
    ),
    d(
        "delivery",
        "deliveries",
        "logistics",
        "delivery window, recipient, proof of delivery and driver",
    ),
    d(
        "return_request",
        "return_requests",
        "the returns desk",
        "customer returns of damaged or unwanted goods: returned items, return reason, RMA number and refund decision",
    ),
    d(
        "carrier",
        "carriers",
        "logistics",
        "shipping company, service levels, rates and pickup times",
    ),
    d(
        "vehicle",
        "vehicles",
        "the fleet",
        "trucks, vans and cars: license plate, mileage, fuel type and service schedule",
    ),
    d(
        "driver",
        "drivers",
        "the fleet",
        "driver's license, shifts, assigned vehicle and safety record",
    ),
    d(
        "route",
        "routes",
        "the fleet",
        "stops, distance, estimated travel time and assigned driver",
    ),
    d(
        "employee",
        "employees",
        "HR",
        "job title, department, manager, salary band and hire date",
    ),
    d(
        "job_posting",
        "job_postings",
        "recruiting",
        "job opening or vacancy: position title, location, salary range and requirements",
    ),
    d(
        "candidate",
        "candidates",
        "recruiting",
        "applicant's resume, skills, applied position and pipeline stage",
    ),
    d(
        "interview",
        "interviews",
        "recruiting",
        "interviewers, scheduled time, candidate and feedback scores",
    ),
    d(
        "timesheet",
        "timesheets",
        "payroll",
        "hours worked, overtime, week and project codes",
    ),
    d(
        "payslip",
        "payslips",
        "payroll",
        "gross pay, deductions, net pay and pay period",
    ),
    d(
        "leave_request",
        "leave_requests",
        "HR",
        "vacation or sick days, dates away and approver",
    ),
    d(
        "expense_report",
        "expense_reports",
        "the finance system",
        "receipts, amounts spent, cost center and reimbursement",
    ),
    d(
        "budget",
        "budgets",
        "the finance system",
        "fiscal year, department allocation and spending to date",
    ),
    d(
        "journal_entry",
        "journal_entries",
        "accounting",
        "debits, credits, general ledger accounts and posting date",
    ),
    d(
        "tax_return",
        "tax_returns",
        "accounting",
        "tax period, filing jurisdiction, taxable income and tax owed",
    ),
    d(
        "asset",
        "assets",
        "the fixed asset register",
        "purchase cost, depreciation schedule and location",
    ),
    d(
        "support_ticket",
        "support_tickets",
        "the helpdesk",
        "customer's problem, priority, status and agent",
    ),
    d(
        "incident",
        "incidents",
        "on-call paging",
        "outage severity, affected services, timeline and responder",
    ),
    d(
        "change_request",
        "change_requests",
        "the IT service desk",
        "planned change, risk level, rollback plan and approvals",
    ),
    d(
        "knowledge_article",
        "knowledge_articles",
        "the knowledge base",
        "how-to steps, troubleshooting text and keywords",
    ),
    d(
        "faq_entry",
        "faq_entries",
        "the knowledge base",
        "frequently asked question and its answer",
    ),
    d(
        "chat_conversation",
        "chat_conversations",
        "live chat",
        "visitor messages, transcript, agent and rating",
    ),
    d(
        "survey",
        "surveys",
        "the feedback tool",
        "questions, respondents, response rate and NPS score",
    ),
    d(
        "review",
        "reviews",
        "the feedback tool",
        "star rating, review text, reviewer and product",
    ),
    d(
        "project",
        "projects",
        "the project tracker",
        "goals, owner, deadline and progress",
    ),
    d(
        "task",
        "tasks",
        "the project tracker",
        "to-do title, due date, assignee and checklist",
    ),
    d(
        "milestone",
        "milestones",
        "the project tracker",
        "target date, deliverables and completion status",
    ),
    d(
        "sprint",
        "sprints",
        "the agile board",
        "sprint goal, start and end dates, velocity and story points",
    ),
    d(
        "bug_report",
        "bug_reports",
        "the issue tracker",
        "defect description, steps to reproduce, severity and stack trace",
    ),
    d(
        "feature_request",
        "feature_requests",
        "the product board",
        "requested capability, votes, customer impact and roadmap status",
    ),
    d(
        "release",
        "releases",
        "the release manager",
        "version number, release notes, included changes and ship date",
    ),
    d(
        "deployment",
        "deployments",
        "the delivery pipeline",
        "environment, version deployed, rollout status and rollback",
    ),
    d(
        "build",
        "builds",
        "continuous integration",
        "CI pipeline run of a commit: build logs, test results and artifacts",
    ),
    d(
        "repository",
        "repositories",
        "the code host",
        "source code, branches, default branch and visibility",
    ),
    d(
        "pull_request",
        "pull_requests",
        "the code host",
        "code changes, diff, reviewers and merge status",
    ),
    d(
        "server",
        "servers",
        "the infrastructure inventory",
        "hostname, IP address, operating system and CPU and memory",
    ),
    d(
        "database_backup",
        "database_backups",
        "the infrastructure inventory",
        "snapshot time, database, size and restore point",
    ),
    d(
        "dns_record",
        "dns_records",
        "network management",
        "domain name, record type, target address and TTL",
    ),
    d(
        "firewall_rule",
        "firewall_rules",
        "network management",
        "source and destination addresses, ports, protocol and allow or block",
    ),
    d(
        "ssl_certificate",
        "ssl_certificates",
        "security",
        "TLS/SSL certificate of a domain: issuer, expiry date and key",
    ),
    d(
        "user_account",
        "user_accounts",
        "the directory",
        "login name, email, password reset and multi-factor status",
    ),
    d(
        "access_role",
        "access_roles",
        "the directory",
        "permissions, members and scopes granted",
    ),
    d(
        "api_key",
        "api_keys",
        "the developer portal",
        "key prefix, owner application, scopes and expiry",
    ),
    d(
        "webhook",
        "webhooks",
        "the developer portal",
        "callback URL, subscribed events, secret and delivery attempts",
    ),
    d(
        "audit_log",
        "audit_logs",
        "compliance",
        "who did what, when, from which IP address",
    ),
    d(
        "policy_document",
        "policy_documents",
        "compliance",
        "policy text, version, owner and acknowledgements",
    ),
    d(
        "risk",
        "risks",
        "the risk register",
        "likelihood, impact, mitigation plan and risk owner",
    ),
    d(
        "meeting",
        "meetings",
        "the calendar",
        "attendees, agenda, time slot and video link",
    ),
    d(
        "room_booking",
        "room_bookings",
        "facilities",
        "meeting room, reserved time, capacity and organizer",
    ),
    d(
        "visitor",
        "visitors",
        "the front desk",
        "guest name, host employee, arrival time and badge",
    ),
    d(
        "parking_permit",
        "parking_permits",
        "facilities",
        "car plate, parking zone, validity and holder",
    ),
    d(
        "maintenance_order",
        "maintenance_orders",
        "facilities",
        "repair work, building, technician and urgency",
    ),
    d(
        "equipment_loan",
        "equipment_loans",
        "the IT asset desk",
        "borrowed laptop or device, borrower and return date",
    ),
    d(
        "software_license",
        "software_licenses",
        "software asset management",
        "product, seats used, renewal date and vendor",
    ),
    d(
        "document",
        "documents",
        "the document store",
        "file name, content, owner and sharing permissions",
    ),
    d(
        "folder",
        "folders",
        "the document store",
        "folder path, files inside and access rights",
    ),
    d(
        "signature_request",
        "signature_requests",
        "e-signature",
        "document such as a contract or NDA to sign, signers, signing order and status",
    ),
    d(
        "form_submission",
        "form_submissions",
        "the forms tool",
        "submitted answers, form name and submitter",
    ),
    d(
        "appointment",
        "appointments",
        "scheduling",
        "booked time slot, client, service and reminder",
    ),
    d(
        "patient_record",
        "patient_records",
        "the clinic system",
        "patient's medical history, allergies, diagnoses and visits",
    ),
    d(
        "prescription",
        "prescriptions",
        "the pharmacy",
        "medication, dosage, refills and prescribing doctor",
    ),
    d(
        "lab_result",
        "lab_results",
        "the clinic system",
        "blood test values, reference ranges and ordering physician",
    ),
    d(
        "course",
        "courses",
        "the learning platform",
        "lessons, instructor, duration and syllabus",
    ),
    d(
        "enrollment",
        "enrollments",
        "the learning platform",
        "a learner signed up for a course: progress and completion",
    ),
    d(
        "certificate",
        "certificates",
        "the learning platform",
        "credential earned, issue date and verification code",
    ),
    d(
        "student",
        "students",
        "the school system",
        "pupil's name, class, guardians and attendance",
    ),
    d(
        "grade",
        "grades",
        "the school system",
        "exam score, subject, term and teacher",
    ),
    d(
        "library_book",
        "library_books",
        "the library",
        "title, author, ISBN, borrower and due date",
    ),
    d(
        "event",
        "events",
        "event management",
        "event date, venue, speakers and attendees",
    ),
    d(
        "ticket_sale",
        "ticket_sales",
        "the box office",
        "seats sold, ticket price, buyer and show",
    ),
    d(
        "donation",
        "donations",
        "fundraising",
        "donor, gift amount, campaign and tax receipt",
    ),
    d(
        "volunteer",
        "volunteers",
        "volunteering",
        "volunteer's availability, skills and hours served",
    ),
    d(
        "grant_application",
        "grant_applications",
        "grants",
        "funding amount requested, proposal and review decision",
    ),
    d(
        "property_listing",
        "property_listings",
        "real estate",
        "house or apartment for sale or rent, price, bedrooms and photos",
    ),
    d(
        "insurance_claim",
        "insurance_claims",
        "insurance",
        "claimed loss, policy number, adjuster and payout",
    ),
    d(
        "tenant",
        "tenants",
        "property management",
        "renter's lease, monthly rent, unit and deposit",
    ),
];

/// One of the ten actions every domain offers.
pub struct Action {
    /// The name's shape: `{noun}` or `{plural}` is replaced.
    pub name: &'static str,
    /// The title's verb: "List".
    pub verb: &'static str,
    /// Whether the title names the plural.
    pub plural: bool,
    /// The description's shape (`{noun}`, `{plural}`, `{system}`, `{details}`).
    pub description: &'static str,
    /// The parameters beyond the domain's id: (name shape, description shape).
    pub parameters: &'static [(&'static str, &'static str)],
    /// Whether it only reads.
    pub read_only: bool,
}

/// The ten actions.
pub const ACTIONS: [Action; 10] = [
    Action {
        name: "list_{plural}",
        verb: "List",
        plural: true,
        description: "List {plural} in {system}, newest first, filtered by status and date range; use it to browse {plural} page by page. Each row shows {details}.",
        parameters: &[
            ("status", "Only {plural} in this status."),
            (
                "since",
                "Only {plural} created on or after this date (YYYY-MM-DD).",
            ),
            ("page", "The page of results, from 1."),
        ],
        read_only: true,
    },
    Action {
        name: "get_{noun}",
        verb: "Get",
        plural: false,
        description: "Read one {noun} from {system} by its id, with {details}; use it when you know which {noun} you need.",
        parameters: &[("{noun}_id", "The {noun}'s id.")],
        read_only: true,
    },
    Action {
        name: "search_{plural}",
        verb: "Search",
        plural: true,
        description: "Search {plural} in {system} by free text over {details}; use it to find a {noun} when you do not know its id.",
        parameters: &[
            ("query", "Words to look for in the {noun}'s {details}."),
            ("limit", "The most {plural} to return."),
        ],
        read_only: true,
    },
    Action {
        name: "create_{noun}",
        verb: "Create",
        plural: false,
        description: "Create a new {noun} in {system} with {details}; two steps: a preview first, then confirm=true to add it.",
        parameters: &[
            ("fields", "The new {noun}'s {details}."),
            ("confirm", "True to create it after the preview."),
        ],
        read_only: false,
    },
    Action {
        name: "update_{noun}",
        verb: "Update",
        plural: false,
        description: "Change an existing {noun} in {system}: edit its {details}; use it to correct or modify a {noun}.",
        parameters: &[
            ("{noun}_id", "The {noun}'s id."),
            ("fields", "The {details} to change."),
            ("confirm", "True to save the change after the preview."),
        ],
        read_only: false,
    },
    Action {
        name: "delete_{noun}",
        verb: "Delete",
        plural: false,
        description: "Delete a {noun} from {system} permanently, removing it for good; use it only when the {noun} was created by mistake.",
        parameters: &[
            ("{noun}_id", "The {noun}'s id."),
            ("confirm", "True to delete it after the preview."),
        ],
        read_only: false,
    },
    Action {
        name: "archive_{noun}",
        verb: "Archive",
        plural: false,
        description: "Archive a {noun} so it no longer shows among {system}'s active {plural} but is kept for records; use it to close out an old {noun}.",
        parameters: &[
            ("{noun}_id", "The {noun}'s id."),
            ("reason", "Why the {noun} is archived."),
        ],
        read_only: false,
    },
    Action {
        name: "export_{plural}",
        verb: "Export",
        plural: true,
        description: "Export {plural} from {system} as a CSV spreadsheet file for a date range, with {details}; use it for reports and offline analysis.",
        parameters: &[
            ("from", "The first date of the range (YYYY-MM-DD)."),
            ("to", "The last date of the range (YYYY-MM-DD)."),
            ("format", "csv or xlsx."),
        ],
        read_only: true,
    },
    Action {
        name: "assign_{noun}",
        verb: "Assign",
        plural: false,
        description: "Assign a {noun} to a person or team in {system} so they own it and are responsible for it; use it to hand a {noun} over or reassign it.",
        parameters: &[
            ("{noun}_id", "The {noun}'s id."),
            ("assignee", "The person or team who takes it over."),
        ],
        read_only: false,
    },
    Action {
        name: "comment_on_{noun}",
        verb: "Comment on",
        plural: false,
        description: "Add a comment or note to a {noun}'s history in {system}, visible to the team; use it to record a remark without changing the {noun}.",
        parameters: &[
            ("{noun}_id", "The {noun}'s id."),
            ("comment", "The note to add."),
        ],
        read_only: false,
    },
];

/// `noun` with spaces for underscores: `expense report`.
pub fn words(snake: &str) -> String {
    snake.replace('_', " ")
}

/// `shape` with the domain's words put in.
pub fn fill(shape: &str, domain: &Domain) -> String {
    shape
        .replace("{noun}_id", &format!("{}_id", domain.noun))
        .replace("{noun}", &words(domain.noun))
        .replace("{plural}", &words(domain.plural))
        .replace("{system}", domain.system)
        .replace("{details}", domain.details)
}

/// The tool name of `action` in `domain`: `list_expense_reports`.
pub fn tool_name(action: &Action, domain: &Domain) -> String {
    action
        .name
        .replace("{noun}", domain.noun)
        .replace("{plural}", domain.plural)
}

/// The title of `action` in `domain`: `List Expense Reports`.
pub fn title(action: &Action, domain: &Domain) -> String {
    let object = if action.plural {
        domain.plural
    } else {
        domain.noun
    };
    let object: Vec<String> = object
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    format!("{} {}", action.verb, object.join(" "))
}

/// A parameter's name in `domain`: `expense_report_id`.
pub fn parameter_name(shape: &str, domain: &Domain) -> String {
    shape.replace("{noun}", domain.noun)
}
