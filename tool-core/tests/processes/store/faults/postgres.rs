//! PostgreSQL cut away by the proxy at a given statement, then given back: an approval before
//! its receipt, a run that ended and a task that completed during the outage, and a task whose
//! instance lost the store.

use super::setup::Setup;
use super::*;

/// Transition A: the store fails after the approval claimed the call and before its receipt
/// claim. The client is told it was not run; the claim could not be given back then, but it is
/// once the store returns, and the call is approved and runs exactly once — no restart.
pub(super) fn an_approval_cut_before_its_receipt_is_released_and_runs_once_the_store_is_back() {
    let Some(url) = postgres_url() else { return };
    child_cli::block_on(async {
        let setup = Setup::start(&url).await;
        let asked = setup.pay(1, None).await;
        let state = asked["requestState"].as_str().unwrap_or_else(|| panic!("{asked}")).to_owned();
        setup.proxy().cut_when("INSERT INTO toolsmith_receipts");
        let refused = setup.pay(1, Some(&state)).await;
        assert!(setup.proxy().is_cut(), "the receipt claim was reached: {refused}");
        assert_eq!(refused["isError"], true, "{refused}");
        assert!(setup.payments().is_empty(), "nothing ran while the store was away");
        setup.proxy().restore();
        let answers = setup.approve_until_paid(1, &state).await;
        assert_eq!(setup.payments(), ["paid 1"], "exactly once");
        assert!(
            answers.iter().all(|a| a == "paid 1" || a.contains("already being continued")),
            "while the claim was given back, the call was only said to be in progress: {answers:?}"
        );
        let again = setup.pay(1, Some(&state)).await;
        assert_eq!(again["isError"], true, "resolved: {again}");
        assert_eq!(setup.payments(), ["paid 1"], "an approval sent again runs nothing");
        assert!(setup.pending().is_empty(), "{:?}", setup.pending());
        setup.cleanup().await;
    });
}

/// Transition B: the store fails after the tool ran and before its receipt is finished. The
/// client has its result; once the store is back the receipt reads done and the call is no
/// longer listed as running — and an approval sent again runs nothing.
pub(super) fn a_run_that_ended_during_an_outage_is_recorded_once_the_store_is_back() {
    let Some(url) = postgres_url() else { return };
    child_cli::block_on(async {
        let setup = Setup::start(&url).await;
        let asked = setup.pay(2, None).await;
        let state = asked["requestState"].as_str().unwrap_or_else(|| panic!("{asked}")).to_owned();
        setup.proxy().cut_when("UPDATE toolsmith_receipts");
        let done = setup.pay(2, Some(&state)).await;
        assert!(setup.proxy().is_cut(), "the receipt's finish was reached: {done}");
        assert_eq!(text(&done), "paid 2", "the client has its result: {done}");
        assert_eq!(setup.payments(), ["paid 2"]);
        let health = setup.health().await;
        assert_eq!(
            (&health["status"], &health["backend"]),
            (&json!("unavailable"), &json!("postgres")),
            "{health}"
        );
        setup.log_names_the_receipt_store("--store postgres://").await;
        setup.proxy().restore();
        setup.receipt_done_and_call_gone().await;
        let again = setup.pay(2, Some(&state)).await;
        assert_eq!(again["isError"], true, "resolved: {again}");
        assert_eq!(setup.payments(), ["paid 2"], "exactly once");
        setup.cleanup().await;
    });
}

/// Transition C: a durable task's attempt finishes while the store is away, so neither its
/// receipt nor "completed" can be recorded. Once the store is back the task ends `completed` with that attempt's result:
/// not run again, not failed, not left `working`.
pub(super) fn a_task_that_completed_during_an_outage_ends_completed_once_the_store_is_back() {
    let Some(url) = postgres_url() else { return };
    child_cli::block_on(async {
        let setup = Setup::start(&url).await;
        let task = setup.start_task(3).await;
        let marker = |suffix: &str| setup.marker(suffix);
        // The first write after the body ran: its receipt's finish; the task's completion fails
        // after it, the store being away.
        setup.proxy().cut_when("UPDATE toolsmith_receipts");
        std::fs::write(marker("go"), "").unwrap();
        eventually("the attempt tries to record its end", || {
            let cut = setup.proxy().is_cut();
            async move { cut }
        })
        .await;
        assert_eq!(setup.payments(), ["paid 3"], "the attempt ran once");
        setup.proxy().restore();
        eventually("the task ends completed", || {
            let (setup, task) = (&setup, task.clone());
            async move {
                let got = setup.request("tasks/get", &task, json!({"taskId": task})).await;
                let status = got["status"].as_str().unwrap_or_default().to_owned();
                assert!(status != "cancelled", "{got}");
                status == "completed"
            }
        })
        .await;
        let got = setup.request("tasks/get", &task, json!({"taskId": task})).await;
        assert!(got.to_string().contains("paid 3"), "its attempt's result: {got}");
        assert_ne!(got["result"]["isError"], true, "completed, not failed: {got}");
        assert_eq!(setup.payments(), ["paid 3"], "not run again");
        setup.cleanup().await;
    });
}

/// Transition C with a second instance: the first's attempt ends while its store is away, so
/// neither the receipt nor the task's end can be recorded and its task lease runs out. The second
/// instance does not take the task over (or fail it, with no retries left) while the first is
/// alive — the first holds the attempt's end in memory — and once the first reaches the store
/// again the task ends `completed` with that attempt's result. The tool ran exactly once.
pub(super) fn a_task_whose_instance_lost_the_store_is_left_to_it_and_completes_once_it_is_back() {
    let Some(url) = postgres_url() else { return };
    child_cli::block_on(async {
        // Short task leases, so they run out during the outage; an instance lease long enough that
        // the first instance is still alive meanwhile.
        let leases = ["--task-lease", "1", "--instance-lease", "120"];
        let setup = Setup::start_with(&url, &leases).await;
        let task = setup.start_task(4).await;
        // The second instance, straight to the database, after the first took the task.
        let second = serve_on(&setup.direct, &setup.ledger, &leases);
        setup.proxy().cut();
        std::fs::write(setup.marker("go"), "").unwrap();
        let shown = || setup.task(&task);
        eventually("the first attempt ran", || {
            let paid = setup.payments().len() == 1;
            async move { paid }
        })
        .await;
        setup.lease_runs_out(&task).await;
        // The second instance polls for tasks every half second: give it a few chances to take
        // over (or fail) the task, which it must not.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let during = shown();
        assert_eq!(
            (&during["state"], &during["attempts"]),
            (&json!("running"), &json!(1)),
            "left to its live instance: {during}"
        );
        setup.proxy().restore();
        eventually("the task ends completed", || {
            let (url, task) = (second.url.clone(), task.clone());
            async move {
                let got = request_at(&url, "tasks/get", &task, json!({"taskId": task})).await;
                let status = got["status"].as_str().unwrap_or_default().to_owned();
                assert!(status != "cancelled" && status != "failed", "{got}");
                status == "completed"
            }
        })
        .await;
        let got = setup.request("tasks/get", &task, json!({"taskId": task})).await;
        assert!(got.to_string().contains("paid 4"), "the first attempt's result: {got}");
        assert_eq!(shown()["attempts"], 1, "not taken over");
        assert_eq!(setup.payments(), ["paid 4"], "the body ran once");
        drop(second);
        setup.cleanup().await;
    });
}
