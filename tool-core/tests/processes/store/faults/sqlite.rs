//! SQLite on a full disk, then freed: an approval refused unrun, a run that ended and a task
//! that completed while the disk was full.

use super::setup::Setup;
use super::*;

/// SQLite, the disk full before the approval: the approval's claim cannot be written, so the
/// client is told nothing ran; nothing is left claimed, and once the disk has room the same
/// approval runs the call exactly once. The failure names the store that failed.
pub(super) fn sqlite_an_approval_while_the_disk_is_full_is_refused_unrun_and_runs_once_it_is_freed() {
    child_cli::block_on(async {
        let setup = Setup::start_sqlite();
        let asked = setup.pay(1, None).await;
        let state = asked["requestState"].as_str().unwrap_or_else(|| panic!("{asked}")).to_owned();
        setup.disk().fill();
        let refused = setup.pay(1, Some(&state)).await;
        assert_eq!(refused["isError"], true, "{refused}");
        assert!(text(&refused).contains("store failed"), "the failure names the store: {refused}");
        assert!(setup.payments().is_empty(), "nothing ran while the disk was full");
        // The command line names the part of the store that failed and the option behind it.
        let waiting = setup.pending();
        let id = waiting[0]["tool_call_id"].as_str().unwrap_or_else(|| panic!("{waiting:?}"));
        let declined = cli(&setup.direct, &["call", id, "--decline", "not now"]);
        assert!(!declined.ok, "a decision that cannot be written is refused");
        let expected = format!("--store {}: the pending-call store failed: ", setup.direct);
        assert!(declined.stderr.contains(&expected), "{expected:?} in: {}", declined.stderr);
        setup.disk().free();
        setup.approve_until_paid(1, &state).await;
        assert_eq!(setup.payments(), ["paid 1"], "exactly once");
        assert!(setup.pending().is_empty(), "{:?}", setup.pending());
        setup.cleanup().await;
    });
}

/// SQLite, transition B: the disk fills while the approved tool runs, so neither its receipt's
/// finish nor the call's removal can be written. The client has its result; `/healthz` counts
/// the writes kept in memory; the server's log names the part of the store that failed and the
/// option that configured it; once the disk has room the receipt reads done, the call is gone,
/// and an approval sent again runs nothing.
pub(super) fn sqlite_a_run_that_ended_while_the_disk_was_full_is_recorded_once_it_is_freed() {
    child_cli::block_on(async {
        let setup = Setup::start_sqlite();
        let asked = setup.request(
            "tools/call",
            "fault-slow-pay",
            json!({"name": "fault-slow-pay", "arguments": {"amount": 2}}),
        );
        let asked = asked.await;
        let state = asked["requestState"].as_str().unwrap_or_else(|| panic!("{asked}")).to_owned();
        let approve = || {
            let mut params = json!({"name": "fault-slow-pay", "arguments": {"amount": 2}});
            params["requestState"] = json!(state);
            params["inputResponses"] = json!({"approval": {"action": "accept", "content": {"approved": true}}});
            setup.request("tools/call", "fault-slow-pay", params)
        };
        let (done, ()) = tokio::join!(approve(), async {
            eventually("the approved call runs", || {
                let running = setup.marker("running").exists();
                async move { running }
            })
            .await;
            setup.disk().fill();
            std::fs::write(setup.marker("go"), "").unwrap();
        });
        assert_eq!(text(&done), "paid 2", "the client has its result: {done}");
        assert_eq!(setup.payments(), ["paid 2"]);
        let health = setup.health().await;
        assert_eq!(health["backend"], "sqlite", "{health}");
        assert!(
            health["kept_writes"].as_u64() > Some(0),
            "the writes kept for later are counted: {health}"
        );
        setup.log_names_the_receipt_store("--store /").await;
        setup.disk().free();
        setup.receipt_done_and_call_gone().await;
        eventually("no write is kept any longer", || async { setup.health().await["kept_writes"] == 0 }).await;
        let mut again = json!({"name": "fault-slow-pay", "arguments": {"amount": 2}});
        again["requestState"] = json!(state);
        again["inputResponses"] = json!({"approval": {"action": "accept", "content": {"approved": true}}});
        let again = setup.request("tools/call", "fault-slow-pay", again).await;
        assert_eq!(again["isError"], true, "resolved: {again}");
        assert_eq!(setup.payments(), ["paid 2"], "exactly once");
        setup.cleanup().await;
    });
}

/// SQLite, transition C: a durable task's attempt finishes while the disk is full. Once it has
/// room the task ends `completed` with that attempt's result: not run again, not failed.
pub(super) fn sqlite_a_task_that_completed_while_the_disk_was_full_ends_completed_once_it_is_freed() {
    child_cli::block_on(async {
        // A short task lease, so it runs out while the disk is full: the task is left to this
        // process (alive, holding the attempt's end), not failed or run again by its own worker.
        let setup = Setup::start_sqlite_with(&["--task-lease", "1"]);
        let task = setup.start_task(3).await;
        setup.disk().fill();
        std::fs::write(setup.marker("go"), "").unwrap();
        eventually("the attempt ran", || {
            let paid = setup.payments().len() == 1;
            async move { paid }
        })
        .await;
        eventually("its end is kept for later", || async {
            setup.health().await["kept_writes"].as_u64() > Some(0)
        })
        .await;
        let shown = || setup.task(&task);
        setup.lease_runs_out(&task).await;
        // The kept writes back off meanwhile, while the worker polls every half second.
        tokio::time::sleep(Duration::from_secs(3)).await;
        setup.disk().free();
        eventually("the task ends completed", || {
            let (setup, task) = (&setup, task.clone());
            async move {
                let got = setup.request("tasks/get", &task, json!({"taskId": task})).await;
                let status = got["status"].as_str().unwrap_or_default().to_owned();
                assert!(status != "cancelled" && status != "failed", "{got}");
                status == "completed"
            }
        })
        .await;
        let got = setup.request("tasks/get", &task, json!({"taskId": task})).await;
        assert!(got.to_string().contains("paid 3"), "its attempt's result: {got}");
        assert_eq!(setup.payments(), ["paid 3"], "not run again");
        assert_eq!(shown()["attempts"], 1, "one attempt");
        setup.cleanup().await;
    });
}
