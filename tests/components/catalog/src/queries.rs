//! Fixed retrieval queries over the generated catalog, written from what a
//! user asks for (not from the tools' text), each with the one tool that
//! does it. `toolhost-bench` reports recall@5 and MRR over them; an e2e
//! test holds recall@5 to at least 0.9.

/// (query, the tool that answers it).
pub const QUERIES: &[(&str, &str)] = &[
    ("show me the invoices we sent this month", "list_invoices"),
    (
        "how much does customer ACME still owe on invoice 4411",
        "get_invoice",
    ),
    (
        "give the money back to a customer for a faulty charge",
        "create_refund",
    ),
    (
        "which plan and renewal date does this subscription have",
        "get_subscription",
    ),
    (
        "prepare a price quote with a discount for a prospect",
        "create_quote",
    ),
    (
        "change the shipping address on an existing sales order",
        "update_sales_order",
    ),
    (
        "order 200 screws from our supplier",
        "create_purchase_order",
    ),
    (
        "find the vendor whose payment terms are net 60",
        "search_suppliers",
    ),
    (
        "when does the contract with Globex end and what are its renewal terms",
        "get_contract",
    ),
    (
        "hand this customer account over to another account owner",
        "assign_customer",
    ),
    (
        "add a new prospect from the trade show to the CRM",
        "create_lead",
    ),
    (
        "which deals are in the pipeline closing this quarter",
        "list_opportunities",
    ),
    (
        "look up the phone number of our contact at Initech",
        "search_contacts",
    ),
    (
        "launch a new marketing campaign for the spring sale",
        "create_campaign",
    ),
    (
        "fix a typo in the subject line of the welcome email template",
        "update_email_template",
    ),
    ("create a discount code for 20 percent off", "create_coupon"),
    (
        "find products in the kitchen category by SKU or name",
        "search_products",
    ),
    (
        "how many units of SKU KNF-8 are in stock and in which bin",
        "get_inventory_item",
    ),
    ("where is my parcel, track the shipment", "get_shipment"),
    (
        "a customer wants to send back damaged goods for an RMA",
        "create_return_request",
    ),
    (
        "which trucks are due for service by mileage",
        "list_vehicles",
    ),
    (
        "plan the delivery stops for tomorrow's van route",
        "create_route",
    ),
    (
        "onboard a new hire with job title and department",
        "create_employee",
    ),
    (
        "publish an opening for a senior engineer position",
        "create_job_posting",
    ),
    (
        "move this applicant's resume to the next pipeline stage",
        "update_candidate",
    ),
    (
        "schedule an interview with the candidate and two interviewers",
        "create_interview",
    ),
    ("log my overtime hours for last week", "update_timesheet"),
    (
        "download everyone's payslips for March as a spreadsheet",
        "export_payslips",
    ),
    ("request two weeks of vacation", "create_leave_request"),
    (
        "submit my travel receipts for reimbursement",
        "create_expense_report",
    ),
    (
        "how much of the marketing department's budget is spent this fiscal year",
        "get_budget",
    ),
    (
        "post a correcting entry of debits and credits to the general ledger",
        "create_journal_entry",
    ),
    (
        "open a ticket for a customer whose login is broken",
        "create_support_ticket",
    ),
    (
        "the website is down, page the on-call responder with an outage",
        "create_incident",
    ),
    (
        "who is responsible for this support ticket now, give it to the billing team",
        "assign_support_ticket",
    ),
    (
        "find a how-to article about resetting a router",
        "search_knowledge_articles",
    ),
    ("what did customers answer in the NPS survey", "get_survey"),
    ("show one-star reviews of the blender", "search_reviews"),
    ("add a to-do with a due date to the project", "create_task"),
    ("what is the velocity of the current sprint", "get_sprint"),
    (
        "file a defect with steps to reproduce and a stack trace",
        "create_bug_report",
    ),
    (
        "customers keep voting for dark mode, record the idea",
        "create_feature_request",
    ),
    ("write the release notes for version 2.4", "update_release"),
    ("roll back the production deployment", "update_deployment"),
    ("why did the CI build fail, show its logs", "get_build"),
    (
        "review and merge the pull request for the login fix",
        "update_pull_request",
    ),
    (
        "restore the database from last night's snapshot",
        "get_database_backup",
    ),
    (
        "point the www domain at the new IP address",
        "update_dns_record",
    ),
    ("block inbound traffic on port 23", "create_firewall_rule"),
    (
        "which TLS certificates expire next month",
        "list_ssl_certificates",
    ),
    (
        "reset the password of a user's login",
        "update_user_account",
    ),
    ("revoke the leaked API key", "delete_api_key"),
    (
        "who changed the admin settings yesterday and from which IP",
        "search_audit_logs",
    ),
    (
        "book a meeting room for ten people on Friday",
        "create_room_booking",
    ),
    (
        "register a guest arriving at reception for their host",
        "create_visitor",
    ),
    (
        "the air conditioning in building B is broken, send a technician",
        "create_maintenance_order",
    ),
    (
        "lend a laptop to the new intern until June",
        "create_equipment_loan",
    ),
    (
        "send the NDA out for signature by both parties",
        "create_signature_request",
    ),
    (
        "book a haircut appointment for Tuesday at 3pm",
        "create_appointment",
    ),
    (
        "refill the patient's blood pressure medication",
        "update_prescription",
    ),
    ("what were the results of the blood test", "get_lab_result"),
    (
        "sign a student up for the Python course",
        "create_enrollment",
    ),
    (
        "who borrowed the library copy of Dune and when is it due",
        "get_library_book",
    ),
    (
        "how many tickets have we sold for Saturday's show",
        "list_ticket_sales",
    ),
    (
        "send a tax receipt to a donor for their gift",
        "get_donation",
    ),
    (
        "list the apartments for rent with two bedrooms",
        "search_property_listings",
    ),
    (
        "file a claim for water damage under my policy",
        "create_insurance_claim",
    ),
    (
        "old project finished last year, close it out but keep the records",
        "archive_project",
    ),
    (
        "leave a note on the purchase order that the supplier called",
        "comment_on_purchase_order",
    ),
];
