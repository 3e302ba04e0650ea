//! Tool execution: an account is only usable with the user id it belongs to; each tool
//! answers with a canned result.

use super::accounts::account_missing;
use super::listings::find_tool;
use super::*;

// ----- execution -------------------------------------------------------------------------

fn no_account(user: &str, toolkit: &str) -> Response {
    error(
        StatusCode::BAD_REQUEST,
        json!(1803),
        Some("ConnectedAccountNotFound"),
        &format!("No connected account found for user {user} and toolkit {toolkit}"),
        "Connect an account for this user and toolkit first",
    )
}

pub(super) async fn execute(State(inner): State<Arc<Inner>>, Path(slug): Path<String>, Json(body): Json<Value>) -> Response {
    let user = body["user_id"].as_str().map(str::to_owned);
    let account_id = body["connected_account_id"].as_str().map(str::to_owned);
    inner.seen.lock().unwrap().executions.push(Execution {
        slug: slug.clone(),
        user_id: user.clone(),
        connected_account_id: account_id.clone(),
        version: body["version"].as_str().map(str::to_owned),
        arguments: body["arguments"].clone(),
    });
    let Some(def) = find_tool(&inner, &slug) else {
        return error(
            StatusCode::NOT_FOUND,
            json!(404),
            Some("Tool_NotFound"),
            &format!("Tool {slug} not found"),
            "",
        );
    };
    let toolkit = def["toolkit"]["slug"].as_str().unwrap_or_default().to_owned();
    let args = &body["arguments"];
    let account = if def["no_auth"] == true {
        None
    } else {
        let accounts = inner.accounts.lock().unwrap();
        let usable = |a: &&Account| a.toolkit == toolkit && a.status == "ACTIVE" && !a.disabled;
        let found = match (&account_id, &user) {
            (Some(id), u) => match accounts.iter().find(|a| a.id == *id) {
                None => return account_missing(id),
                // An account is only usable with the user it belongs to.
                Some(a) if u.as_ref().is_some_and(|u| *u != a.user_id) => None,
                Some(a) => Some(a).filter(usable),
            },
            (None, Some(u)) => accounts.iter().filter(|a| a.user_id == *u).find(usable),
            (None, None) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    json!(400),
                    Some("BadRequest"),
                    "user_id or connected_account_id is required",
                    "",
                );
            }
        };
        match found {
            Some(a) => Some(a.clone()),
            None => return no_account(user.as_deref().unwrap_or("(none)"), &toolkit),
        }
    };
    let who = json!({"user": user, "account": account.as_ref().map(|a| a.id.clone())});
    let ok = |data: Value| Json(json!({"data": data, "error": null, "successful": true, "log_id": "log_fake"})).into_response();
    match slug.as_str() {
        "GITHUB_CREATE_ISSUE" if args["title"] == "fail" => {
            Json(json!({"data": {}, "error": "Validation Failed: the title is not allowed",
                                                                       "successful": false, "log_id": "log_fail"}))
            .into_response()
        }
        "GITHUB_CREATE_ISSUE" => ok(json!({"number": 7, "url": format!("https://github.example/{}/{}/issues/7",
                                           args["owner"].as_str().unwrap_or(""), args["repo"].as_str().unwrap_or(""))})),
        "GMAIL_SEND_EMAIL" => ok(json!({"message_id": "msg_1", "to": args["recipient_email"], "sent_by": who})),
        "HACKERNEWS_GET_FRONTPAGE" => ok(json!({"stories": [{"title": "Hello"}]})),
        _ => ok(json!({"echo": args, "sent_by": who})),
    }
}

/// Distinct `(user_id, toolkit)` pairs with an active account.
pub fn active_pairs(fake: &ComposioFake) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (_, user, toolkit, status) in fake.accounts() {
        if status == "ACTIVE" {
            out.entry(user).or_default().push(toolkit);
        }
    }
    out
}
