//! Realistic tool catalogs for tool search: services × actions × objects, described the way
//! SaaS toolkits (Composio, Arcade, MCP servers) describe theirs, with parameters; and queries
//! written by hand for some of them, in other words than the descriptions use.

#![allow(dead_code)]

use serde_json::{Value, json};
use tool_core::spec::ToolSpec;

/// An object of a service: (id, plural, what one is).
type Object = (&'static str, &'static str, &'static str);
/// A service: (id, its name, its objects).
type Service = (&'static str, &'static str, &'static [Object]);

const SERVICES: &[Service] = &[
    (
        "github",
        "GitHub",
        &[
            ("issue", "issues", "a bug report or task in a repository"),
            ("pull_request", "pull requests", "a proposed code change"),
            ("repository", "repositories", "a Git repository"),
            ("release", "releases", "a tagged version of a repository"),
        ],
    ),
    (
        "gitlab",
        "GitLab",
        &[
            ("merge_request", "merge requests", "a proposed code change"),
            ("pipeline", "pipelines", "a CI/CD run"),
        ],
    ),
    (
        "slack",
        "Slack",
        &[
            ("message", "messages", "a chat message in a channel"),
            ("channel", "channels", "a conversation space"),
            ("reminder", "reminders", "a reminder for a user"),
        ],
    ),
    (
        "gmail",
        "Gmail",
        &[
            ("email", "emails", "an email message"),
            ("draft", "drafts", "an unsent email"),
            ("label", "labels", "a label that organises emails"),
        ],
    ),
    (
        "google_calendar",
        "Google Calendar",
        &[
            ("event", "events", "a meeting or appointment"),
            ("calendar", "calendars", "a calendar of events"),
        ],
    ),
    (
        "google_drive",
        "Google Drive",
        &[
            ("file", "files", "a document or file in the drive"),
            ("folder", "folders", "a folder of files"),
            ("permission", "permissions", "who can access a file"),
        ],
    ),
    (
        "jira",
        "Jira",
        &[
            ("ticket", "tickets", "an issue in a Jira project"),
            ("sprint", "sprints", "a time-boxed iteration"),
            ("project", "projects", "a Jira project"),
        ],
    ),
    (
        "zendesk",
        "Zendesk",
        &[
            ("ticket", "tickets", "a customer support request"),
            ("macro", "macros", "a canned support reply"),
        ],
    ),
    (
        "salesforce",
        "Salesforce",
        &[
            ("lead", "leads", "a prospective customer"),
            ("opportunity", "opportunities", "a potential sale"),
            ("account", "accounts", "a customer company"),
        ],
    ),
    (
        "hubspot",
        "HubSpot",
        &[
            ("contact", "contacts", "a person in the CRM"),
            ("deal", "deals", "a sale in the pipeline"),
            ("company", "companies", "an organisation in the CRM"),
        ],
    ),
    (
        "stripe",
        "Stripe",
        &[
            ("payment", "payments", "a card charge"),
            ("refund", "refunds", "money returned to a customer"),
            ("subscription", "subscriptions", "a recurring billing plan"),
            ("invoice", "invoices", "a bill sent to a customer"),
        ],
    ),
    (
        "shopify",
        "Shopify",
        &[
            ("product", "products", "an item for sale in the store"),
            ("order", "orders", "a customer's purchase"),
            ("discount", "discounts", "a price reduction code"),
        ],
    ),
    (
        "notion",
        "Notion",
        &[
            ("page", "pages", "a Notion document"),
            ("database", "databases", "a table of pages"),
        ],
    ),
    (
        "trello",
        "Trello",
        &[("card", "cards", "a task card on a board"), ("board", "boards", "a board of lists")],
    ),
    (
        "asana",
        "Asana",
        &[("task", "tasks", "a unit of work"), ("project", "projects", "a set of tasks")],
    ),
    (
        "dropbox",
        "Dropbox",
        &[
            ("file", "files", "a stored file"),
            ("shared_link", "shared links", "a public link to a file"),
        ],
    ),
    (
        "twilio",
        "Twilio",
        &[
            ("sms", "text messages", "an SMS text message"),
            ("call", "phone calls", "a voice call"),
        ],
    ),
    (
        "zoom",
        "Zoom",
        &[
            ("meeting", "meetings", "a video conference"),
            ("recording", "recordings", "a recorded meeting"),
        ],
    ),
    (
        "aws_s3",
        "Amazon S3",
        &[
            ("bucket", "buckets", "a storage bucket"),
            ("object", "objects", "a stored object in a bucket"),
        ],
    ),
    (
        "kubernetes",
        "Kubernetes",
        &[
            ("pod", "pods", "a running container group"),
            ("deployment", "deployments", "a managed set of pods"),
        ],
    ),
    (
        "datadog",
        "Datadog",
        &[
            ("monitor", "monitors", "an alert on a metric"),
            ("dashboard", "dashboards", "a set of graphs"),
        ],
    ),
    (
        "pagerduty",
        "PagerDuty",
        &[
            ("incident", "incidents", "an outage being handled"),
            ("schedule", "schedules", "an on-call rotation"),
        ],
    ),
    (
        "spotify",
        "Spotify",
        &[("playlist", "playlists", "a list of songs"), ("track", "tracks", "a song")],
    ),
    ("airtable", "Airtable", &[("record", "records", "a row of a base")]),
    (
        "linear",
        "Linear",
        &[("issue", "issues", "an engineering task"), ("cycle", "cycles", "a sprint")],
    ),
    (
        "openweather",
        "OpenWeather",
        &[("forecast", "forecasts", "a weather forecast for a place")],
    ),
    (
        "google_maps",
        "Google Maps",
        &[
            ("route", "routes", "driving or walking directions"),
            ("place", "places", "a business or landmark"),
        ],
    ),
    (
        "quickbooks",
        "QuickBooks",
        &[
            ("expense", "expenses", "money spent by the business"),
            ("bill", "bills", "a bill to pay a vendor"),
        ],
    ),
    ("docusign", "DocuSign", &[("envelope", "envelopes", "documents sent for signature")]),
    (
        "mailchimp",
        "Mailchimp",
        &[
            ("campaign", "campaigns", "an email newsletter send"),
            ("audience", "audiences", "a mailing list"),
        ],
    ),
];

/// (action id, how the description says it, whether it takes the object's id).
const ACTIONS: &[(&str, &str, bool)] = &[
    ("create", "Create a new {one} ({what}) in {service}.", false),
    ("get", "Get the details of one {one} in {service} by its id.", true),
    ("list", "List the {many} in {service}, newest first, with paging.", false),
    ("update", "Update the fields of an existing {one} in {service}.", true),
    ("delete", "Permanently delete a {one} from {service}.", true),
    ("search", "Search {many} in {service} by keywords and filters.", false),
];

/// Every generated tool of the full grid (about 400): `service.action_object`.
pub fn grid() -> Vec<ToolSpec> {
    let mut out = Vec::new();
    for (service, name, objects) in SERVICES {
        for (object, many, what) in *objects {
            let one = object.replace('_', " ");
            for (action, text, takes_id) in ACTIONS {
                let description = text
                    .replace("{one}", &one)
                    .replace("{many}", many)
                    .replace("{what}", what)
                    .replace("{service}", name);
                let mut properties = serde_json::Map::new();
                if *takes_id {
                    properties.insert(
                        format!("{object}_id"),
                        json!({"type": "string", "description": format!("The id of the {one}")}),
                    );
                }
                if matches!(*action, "create" | "update") {
                    properties.insert(
                        "fields".into(),
                        json!({"type": "object", "description": format!("The {one}'s fields to set")}),
                    );
                }
                if matches!(*action, "list" | "search") {
                    properties.insert("query".into(), json!({"type": "string", "description": "Words to match"}));
                    properties.insert(
                        "limit".into(),
                        json!({"type": "integer", "description": "How many results at most"}),
                    );
                }
                let schema = json!({"type": "object", "properties": Value::Object(properties)});
                let mut spec = ToolSpec::new(format!("{service}.{action}_{object}"), description, schema);
                spec.presentation.namespace = Some((*service).to_owned());
                out.push(spec);
            }
        }
    }
    out
}

/// `n` tools: the grid, then copies of it under numbered workspaces (`acme3_github.…`), as an
/// account with many connected instances has.
pub fn tools(n: usize) -> Vec<ToolSpec> {
    let grid = grid();
    (0..n)
        .map(|i| {
            let mut spec = grid[i % grid.len()].clone();
            let copy = i / grid.len();
            if copy > 0 {
                spec.id = format!("ws{copy}_{}", spec.id);
                spec.description = format!("{} (workspace {copy})", spec.description);
            }
            spec
        })
        .collect()
}

/// Queries written for tools of the grid, in a user's words, with the tool each should find.
pub const QUERIES: &[(&str, &str)] = &[
    ("open a bug report on github", "github.create_issue"),
    ("list open pull requests", "github.list_pull_request"),
    ("publish a new release of my repo", "github.create_release"),
    ("show the CI pipelines on gitlab", "gitlab.list_pipeline"),
    ("post a message to the team slack channel", "slack.create_message"),
    ("remind me on slack tomorrow", "slack.create_reminder"),
    ("send an email with gmail", "gmail.create_email"),
    ("find emails from my boss", "gmail.search_email"),
    ("save an email draft", "gmail.create_draft"),
    ("schedule a meeting on my google calendar", "google_calendar.create_event"),
    ("cancel the calendar event", "google_calendar.delete_event"),
    ("what is on my calendar this week", "google_calendar.list_event"),
    ("upload a file to google drive", "google_drive.create_file"),
    ("share a drive file with a colleague", "google_drive.create_permission"),
    ("create a jira ticket for the bug", "jira.create_ticket"),
    ("start the next jira sprint", "jira.create_sprint"),
    ("look up a zendesk support ticket", "zendesk.get_ticket"),
    ("reply with a canned zendesk macro", "zendesk.get_macro"),
    ("add a new sales lead to salesforce", "salesforce.create_lead"),
    ("update the salesforce opportunity amount", "salesforce.update_opportunity"),
    ("add a contact to hubspot crm", "hubspot.create_contact"),
    ("move the hubspot deal forward", "hubspot.update_deal"),
    ("refund a customer's stripe payment", "stripe.create_refund"),
    ("cancel a stripe subscription", "stripe.delete_subscription"),
    ("send an invoice through stripe", "stripe.create_invoice"),
    ("list the orders in my shopify store", "shopify.list_order"),
    ("create a shopify discount code", "shopify.create_discount"),
    ("add a product to the shop", "shopify.create_product"),
    ("write a new notion page", "notion.create_page"),
    ("query a notion database", "notion.search_database"),
    ("add a card to the trello board", "trello.create_card"),
    ("create an asana task for the team", "asana.create_task"),
    ("make a public dropbox link for a file", "dropbox.create_shared_link"),
    ("text a customer by sms", "twilio.create_sms"),
    ("start a zoom video call", "zoom.create_meeting"),
    ("download the zoom meeting recordings", "zoom.list_recording"),
    ("create an s3 bucket", "aws_s3.create_bucket"),
    ("delete an object from the s3 bucket", "aws_s3.delete_object"),
    ("restart a kubernetes pod", "kubernetes.delete_pod"),
    ("scale the kubernetes deployment", "kubernetes.update_deployment"),
    ("set up a datadog alert on cpu", "datadog.create_monitor"),
    ("trigger a pagerduty incident", "pagerduty.create_incident"),
    ("who is on call this week in pagerduty", "pagerduty.get_schedule"),
    ("make a spotify playlist", "spotify.create_playlist"),
    ("search for a song on spotify", "spotify.search_track"),
    ("add a row to airtable", "airtable.create_record"),
    ("file a linear issue", "linear.create_issue"),
    ("weather forecast for Paris", "openweather.get_forecast"),
    ("driving directions to the airport", "google_maps.get_route"),
    ("find a coffee place nearby", "google_maps.search_place"),
    ("record a business expense in quickbooks", "quickbooks.create_expense"),
    ("pay a vendor bill", "quickbooks.update_bill"),
    ("send a contract for signature", "docusign.create_envelope"),
    ("send the newsletter campaign", "mailchimp.create_campaign"),
    ("add subscribers to the mailing list", "mailchimp.update_audience"),
    ("delete a github repository", "github.delete_repository"),
    ("archive a slack channel", "slack.delete_channel"),
    ("rename a drive folder", "google_drive.update_folder"),
    ("get the status of a stripe payment", "stripe.get_payment"),
    ("close a jira project", "jira.delete_project"),
];

/// recall@k of `search` over [`QUERIES`] (the share of queries whose tool is in the first `k`).
pub fn recall_at(k: usize, search: impl Fn(&str, usize) -> Vec<String>) -> f64 {
    let found = QUERIES.iter().filter(|(q, id)| search(q, k).iter().any(|h| h == id)).count();
    found as f64 / QUERIES.len() as f64
}
