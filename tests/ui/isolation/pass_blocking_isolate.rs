// `blocking` and `isolate = "process"` reach the spec, and both tools answer: the blocking one
// on the blocking pool, the isolated one in a child process of this program (which is its own
// worker: `worker_main()` first in `main`).
use tool_core::prelude::*;
use tool_core::Isolation;

/// Count the primes below a bound
#[tool(blocking)]
pub async fn count_primes(
    /// The bound
    below: u64,
) -> usize {
    (2..below).filter(|n| (2..*n).take_while(|d| d * d <= *n).all(|d| n % d != 0)).count()
}

/// Say which process ran the call
#[tool(isolate = "process", blocking)]
pub async fn which_process() -> u32 {
    std::process::id()
}

pub fn main() {
    tool_core::isolate::worker_main();
    let blocking = count_primes::tool().unwrap();
    assert!(blocking.spec().policy.blocking);
    assert_eq!(blocking.spec().policy.isolate, Isolation::InProcess);
    let isolated = which_process::tool().unwrap();
    assert_eq!(isolated.spec().policy.isolate, Isolation::Process);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();
        let primes = registry.call("count-primes", json!({"below": 100}), CallOptions::default()).await.unwrap();
        assert_eq!(primes.value(), json!(25));
        let pid = registry.call("which-process", json!({}), CallOptions::default()).await.unwrap();
        assert_ne!(pid.value(), json!(std::process::id()));
    });
}
