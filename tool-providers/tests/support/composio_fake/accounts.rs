//! Connected accounts: listed, created, linked, read, deleted and refreshed, each with its
//! status and the state its scheme shows.

use super::catalog::{NOW, auth_configs};
use super::listings::{ListQuery, csv, paginate};
use super::*;

// ----- connected accounts ----------------------------------------------------------------

/// The `state.val` of an account: what the scheme's union member for this status requires
/// (tokens are masked, as the real API masks them).
fn state_val(scheme: &str, status: &str, id: &str) -> Value {
    let mut val = json!({"status": status});
    if matches!(scheme, "OAUTH2" | "OAUTH1" | "DCR_OAUTH") {
        match status {
            "INITIATED" => val["redirectUrl"] = json!(format!("https://connect.composio.example/authorize/{id}")),
            "ACTIVE" | "INACTIVE" => val["access_token"] = json!("[REDACTED]"),
            _ => {}
        }
    }
    val
}

fn account_json(a: &Account) -> Value {
    let config = auth_configs().into_iter().find(|c| c["id"] == a.auth_config.as_str());
    let scheme = config.as_ref().map(|c| c["auth_scheme"].clone()).unwrap_or(json!("OAUTH2"));
    let managed = config.as_ref().map(|c| c["is_composio_managed"].clone()).unwrap_or(json!(false));
    json!({
        "id": a.id, "alias": null, "word_id": format!("{}_fake", a.toolkit),
        "auth_config": {"id": a.auth_config, "auth_scheme": scheme, "is_composio_managed": managed, "is_disabled": false},
        "created_at": NOW, "updated_at": NOW, "data": {}, "params": {}, "is_disabled": a.disabled,
        "state": {"authScheme": scheme, "val": state_val(scheme.as_str().unwrap_or("OAUTH2"), &a.status, &a.id)},
        "status": a.status, "status_reason": null, "toolkit": {"slug": a.toolkit}, "user_id": a.user_id,
        "deprecated": {"uuid": format!("uuid-{}", a.id), "labels": []},
    })
}

pub(super) async fn list_accounts(State(inner): State<Arc<Inner>>, Query(q): Query<ListQuery>) -> Response {
    let (users, kits, ids, statuses, configs) = (
        csv(&q.user_ids),
        csv(&q.toolkit_slugs),
        csv(&q.connected_account_ids),
        csv(&q.statuses),
        csv(&q.auth_config_ids),
    );
    let items: Vec<Value> = inner
        .accounts
        .lock()
        .unwrap()
        .iter()
        .filter(|a| users.as_ref().is_none_or(|u| u.contains(&a.user_id)))
        .filter(|a| kits.as_ref().is_none_or(|k| k.contains(&a.toolkit)))
        .filter(|a| ids.as_ref().is_none_or(|i| i.contains(&a.id)))
        .filter(|a| statuses.as_ref().is_none_or(|s| s.contains(&a.status)))
        .filter(|a| configs.as_ref().is_none_or(|c| c.contains(&a.auth_config)))
        .map(account_json)
        .collect();
    paginate(&inner, items, &q, |i| {
        account_json(&Account {
            id: format!("ca_loop{i}"),
            user_id: "loop".into(),
            toolkit: "loop".into(),
            auth_config: "ac_loop".into(),
            status: "ACTIVE".into(),
            disabled: false,
        })
    })
}

fn enabled_config(id: &str) -> Result<Value, Box<Response>> {
    match auth_configs().into_iter().find(|c| c["id"] == id) {
        Some(c) if c["status"] == "ENABLED" => Ok(c),
        Some(_) => Err(Box::new(error(
            StatusCode::BAD_REQUEST,
            json!(400),
            Some("AuthConfig_Disabled"),
            "Auth config is disabled",
            "",
        ))),
        None => Err(Box::new(error(
            StatusCode::NOT_FOUND,
            json!(404),
            Some("AuthConfig_NotFound"),
            &format!("Auth config {id} not found"),
            "",
        ))),
    }
}

pub(super) async fn create_account(State(inner): State<Arc<Inner>>, Json(body): Json<Value>) -> Response {
    inner.seen.lock().unwrap().created.push(body.clone());
    let Some(config_id) = body["auth_config"]["id"].as_str() else {
        return error(
            StatusCode::BAD_REQUEST,
            json!(400),
            Some("BadRequest"),
            "auth_config.id is required",
            "",
        );
    };
    let config = match enabled_config(config_id) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let user = body["connection"]["user_id"].as_str().unwrap_or("default").to_owned();
    let scheme = config["auth_scheme"].as_str().unwrap_or("OAUTH2").to_owned();
    let state = &body["connection"]["state"];
    let redirect = matches!(scheme.as_str(), "OAUTH2" | "OAUTH1" | "DCR_OAUTH");
    let status = if redirect {
        "INITIATED"
    } else if state["val"].is_object() {
        "ACTIVE"
    } else {
        return error(
            StatusCode::BAD_REQUEST,
            json!(400),
            Some("ConnectedAccount_MissingState"),
            "connection.state is required for this auth scheme",
            "",
        );
    };
    let id = inner.new_id("ca");
    inner.accounts.lock().unwrap().push(Account {
        id: id.clone(),
        user_id: user,
        toolkit: config["toolkit"]["slug"].as_str().unwrap_or_default().to_owned(),
        auth_config: config_id.to_owned(),
        status: status.to_owned(),
        disabled: false,
    });
    let url = redirect.then(|| format!("https://connect.composio.example/authorize/{id}"));
    let val = state_val(&scheme, status, &id);
    (
        StatusCode::CREATED,
        Json(
            json!({"id": id, "connectionData": {"authScheme": scheme, "val": val}, "status": status,
                    "redirect_url": url, "redirect_uri": url,
                    "deprecated": {"authConfigUuid": format!("uuid-{config_id}"), "uuid": format!("uuid-{id}")}}),
        ),
    )
        .into_response()
}

pub(super) async fn link(State(inner): State<Arc<Inner>>, Json(body): Json<Value>) -> Response {
    let (Some(config_id), Some(user)) = (body["auth_config_id"].as_str(), body["user_id"].as_str()) else {
        return error(
            StatusCode::BAD_REQUEST,
            json!(400),
            Some("BadRequest"),
            "auth_config_id and user_id are required",
            "",
        );
    };
    let config = match enabled_config(config_id) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    inner.seen.lock().unwrap().links.push((config_id.to_owned(), user.to_owned()));
    let id = inner.new_id("ca");
    inner.accounts.lock().unwrap().push(Account {
        id: id.clone(),
        user_id: user.to_owned(),
        toolkit: config["toolkit"]["slug"].as_str().unwrap_or_default().to_owned(),
        auth_config: config_id.to_owned(),
        status: "INITIATED".into(),
        disabled: false,
    });
    (
        StatusCode::CREATED,
        Json(
            json!({"link_token": format!("lt_{id}"), "redirect_url": format!("https://connect.composio.example/link/lt_{id}"),
                    "expires_at": "2026-01-01T00:10:00.000Z", "connected_account_id": id}),
        ),
    )
        .into_response()
}

pub(super) fn account_missing(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        json!(1800),
        Some("ConnectedAccount_NotFound"),
        &format!("Connected account {id} not found"),
        "",
    )
}

pub(super) async fn get_account(State(inner): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    let accounts = inner.accounts.lock().unwrap();
    match accounts.iter().find(|a| a.id == id) {
        Some(a) => Json(account_json(a)).into_response(),
        None => account_missing(&id),
    }
}

pub(super) async fn delete_account(State(inner): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    let mut accounts = inner.accounts.lock().unwrap();
    let before = accounts.len();
    accounts.retain(|a| a.id != id);
    if accounts.len() == before {
        return account_missing(&id);
    }
    inner.seen.lock().unwrap().deleted.push(id);
    Json(json!({"success": true})).into_response()
}

pub(super) async fn refresh_account(State(inner): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    let mut accounts = inner.accounts.lock().unwrap();
    match accounts.iter_mut().find(|a| a.id == id) {
        Some(a) => {
            a.status = "INITIATED".into();
            Json(json!({"id": id, "status": "INITIATED", "redirect_url": format!("https://connect.composio.example/authorize/{id}")}))
                .into_response()
        }
        None => account_missing(&id),
    }
}
