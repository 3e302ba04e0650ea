//! The listing endpoints: toolkits, tools and auth configs, cursor-paginated (and endless
//! when a test asks), and a single toolkit or tool.

use super::catalog::{auth_config, auth_configs, tool, toolkit, toolkit_detail, toolkits, tools};
use super::*;

// ----- listings ------------------------------------------------------------------------

#[derive(serde::Deserialize, Default)]
pub(super) struct ListQuery {
    pub(super) limit: Option<f64>,
    pub(super) cursor: Option<String>,
    pub(super) toolkit_slug: Option<String>,
    pub(super) search: Option<String>,
    pub(super) query: Option<String>,
    pub(super) tool_slugs: Option<String>,
    pub(super) user_ids: Option<String>,
    pub(super) toolkit_slugs: Option<String>,
    pub(super) connected_account_ids: Option<String>,
    pub(super) statuses: Option<String>,
    pub(super) auth_config_ids: Option<String>,
}

pub(super) fn csv(s: &Option<String>) -> Option<Vec<String>> {
    s.as_ref()
        .map(|s| s.split(',').map(|p| p.trim().to_owned()).filter(|p| !p.is_empty()).collect())
}

/// One page of `items` in Composio's list envelope; the cursor is opaque to clients.
pub(super) fn paginate(inner: &Inner, items: Vec<Value>, q: &ListQuery, endless_item: impl Fn(usize) -> Value) -> Response {
    // No upper bound: `@composio/core` 0.21.0 asks for `limit=9999` when it lists tools by slug.
    let limit = q.limit.unwrap_or(20.0);
    if !limit.is_finite() || limit < 1.0 {
        return error(
            StatusCode::BAD_REQUEST,
            json!(400),
            Some("BadRequest"),
            "limit must be at least 1",
            "",
        );
    }
    let limit = limit as usize;
    let offset: usize = match q.cursor.as_deref() {
        None | Some("") => 0,
        Some(c) => match c.strip_prefix("cur_").and_then(|n| n.parse().ok()) {
            Some(n) => n,
            None => return error(StatusCode::BAD_REQUEST, json!(400), Some("InvalidCursor"), "invalid cursor", ""),
        },
    };
    if inner.misbehave.lock().unwrap().endless {
        let items: Vec<Value> = (0..limit).map(|i| endless_item(offset + i)).collect();
        return Json(
            json!({"items": items, "next_cursor": format!("cur_{}", offset + limit), "total_pages": 1e9,
                            "current_page": (offset / limit + 1) as f64, "total_items": 1e12}),
        )
        .into_response();
    }
    let total = items.len();
    let page: Vec<Value> = items.into_iter().skip(offset).take(limit).collect();
    let next = (offset + limit < total).then(|| format!("cur_{}", offset + limit));
    Json(
        json!({"items": page, "next_cursor": next, "total_pages": total.div_ceil(limit) as f64,
                "current_page": (offset / limit + 1) as f64, "total_items": total as f64}),
    )
    .into_response()
}

pub(super) async fn list_toolkits(State(inner): State<Arc<Inner>>, Query(q): Query<ListQuery>) -> Response {
    paginate(&inner, toolkits(), &q, |i| toolkit(&format!("loop{i}"), "Loop", "again", &[], true))
}

pub(super) async fn get_toolkit(Path(slug): Path<String>) -> Response {
    match toolkit_detail(&slug) {
        Some(t) => Json(t).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            json!(404),
            Some("Toolkit_NotFound"),
            &format!("Toolkit {slug} not found"),
            "",
        ),
    }
}

pub(super) async fn list_tools(State(inner): State<Arc<Inner>>, Query(q): Query<ListQuery>) -> Response {
    let search = q.query.clone().or(q.search.clone()).map(|s| s.to_lowercase());
    let slugs = csv(&q.tool_slugs);
    let items: Vec<Value> = current_tools(&inner)
        .into_iter()
        .filter(|t| {
            q.toolkit_slug
                .as_deref()
                .is_none_or(|k| t["toolkit"]["slug"].as_str() == Some(&k.to_lowercase()))
        })
        .filter(|t| slugs.as_ref().is_none_or(|s| s.iter().any(|x| t["slug"] == x.as_str())))
        .filter(|t| {
            search.as_deref().is_none_or(|s| {
                t["slug"].as_str().unwrap().to_lowercase().contains(s) || t["description"].as_str().unwrap().to_lowercase().contains(s)
            })
        })
        .collect();
    paginate(&inner, items, &q, |i| {
        tool(
            &format!("LOOP_T{i}"),
            "loop",
            "Loop",
            "again",
            json!({"type": "object"}),
            json!({}),
            true,
        )
    })
}

/// The catalog with the descriptions [`ComposioFake::describe`] replaced.
fn current_tools(inner: &Inner) -> Vec<Value> {
    let descriptions = inner.descriptions.lock().unwrap();
    let mut all = tools();
    for t in &mut all {
        if let Some(d) = t["slug"].as_str().and_then(|s| descriptions.get(s)) {
            t["description"] = json!(d);
        }
    }
    all
}

pub(super) fn find_tool(inner: &Inner, slug: &str) -> Option<Value> {
    current_tools(inner).into_iter().find(|t| t["slug"] == slug)
}

pub(super) async fn get_tool(State(inner): State<Arc<Inner>>, Path(slug): Path<String>) -> Response {
    match find_tool(&inner, &slug) {
        Some(t) => Json(t).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            json!(404),
            Some("Tool_NotFound"),
            &format!("Tool {slug} not found"),
            "",
        ),
    }
}

pub(super) async fn list_auth_configs(State(inner): State<Arc<Inner>>, Query(q): Query<ListQuery>) -> Response {
    let items: Vec<Value> = auth_configs()
        .into_iter()
        .filter(|c| q.toolkit_slug.as_deref().is_none_or(|k| c["toolkit"]["slug"] == k))
        .collect();
    paginate(&inner, items, &q, |i| {
        auth_config(&format!("ac_loop{i}"), "loop", "NO_AUTH", false, false)
    })
}
