//! Allocations per happy-path registry call, counted by a global allocator (the `it` binary's
//! own), so the fixed cost of a call cannot silently grow back. The bounds sit a little above
//! what was measured when they were set (see each constant); a change that allocates more per
//! call fails here, and one that allocates less may lower them.
//!
//! The binary runs many tests at once, so the allocator counts only on a thread that asked it
//! to ([`Counted`]): the calls measured here run on a current-thread runtime, on the test's own
//! thread, and every allocation they make is counted, none of another test's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use tool_core::prelude::*;

struct Counting;

thread_local! {
    /// This thread's allocations while it counts, `None` while it does not. Const-initialised
    /// and without a destructor, so the allocator can read it at any time.
    static ALLOCATIONS: Cell<Option<usize>> = const { Cell::new(None) };
}

fn count_one() {
    // `try_with`: a thread being torn down has no thread-locals left, and is not counting.
    let _ = ALLOCATIONS.try_with(|n| {
        if let Some(count) = n.get() {
            n.set(Some(count + 1));
        }
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Counting on this thread while it lives; [`Counted::total`] reads the count.
struct Counted;

impl Counted {
    fn start() -> Counted {
        ALLOCATIONS.with(|n| n.set(Some(0)));
        Counted
    }

    fn total(&self) -> usize {
        ALLOCATIONS.with(|n| n.get().unwrap_or(0))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        ALLOCATIONS.with(|n| n.set(None));
    }
}

#[path = "../../../benches/support/forecast.rs"]
mod forecast_tool;
use forecast_tool::{ARGS, Forecast, ForecastInput, forecast};

/// The same tool taking a struct of the user's: `#[tool]` cannot vouch for what its
/// `Deserialize` accepts, so it keeps validating
#[tool(id = "alloc-forecast-struct")]
pub async fn forecast_struct(input: ForecastInput) -> Forecast {
    forecast(input.city, input.days, input.metric).await
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct BoundedInput {
    /// At least one day
    #[schemars(range(min = 1))]
    pub days: u32,
}

/// A tool whose schema says more than its type (`minimum: 1`): it keeps validating
#[tool(id = "alloc-bounded")]
pub async fn bounded(input: BoundedInput) -> u32 {
    input.days
}

/// A list of numbers, a std type `#[tool]` vouches for: what the body returns is not checked
/// against the output schema again
#[tool(id = "alloc-plain-output")]
pub async fn plain_output(n: u8) -> Vec<u32> {
    (0..u32::from(n.min(8))).collect()
}

/// The same list in a type of the user's (same schema, same JSON): its outputs are checked
#[derive(Debug, Serialize, JsonSchema)]
#[serde(transparent)]
#[schemars(transparent)]
pub struct Numbers(Vec<u32>);

/// The same tool returning the user's type
#[tool(id = "alloc-checked-output")]
pub async fn checked_output(n: u8) -> Numbers {
    Numbers(plain_output(n).await)
}

/// Measured when set (debug build; allocation counts do not depend on the profile): typed
/// call 9 (the same with a struct of the user's, which validates instead of decoding twice),
/// validated call 6 (its input has no string to own), no-op dynamic call 4 with `cargo test
/// -p tool-core`; 12, 9 and 6 with `cargo test --workspace --test call_allocations` (the file's binary then) (CI's
/// feature set: dependency features are unified with tool-providers' and the examples').
/// History: each call made its derived idempotency key until it was made only when read
/// (17 / 14 / 12 in the workspace); a typed call decoded its arguments twice until the value
/// that showed them valid was kept for the run (16 / 13 / 11); every call made a cancellation
/// token and cloned its call id until a token was made only when the body asks for one and
/// the id was moved (12 / 9 / 7); a `null` output was serialised through a buffer (a realloc)
/// until it was copied (no-op 6); every call copied its tool's id until `ToolCallInfo` shared
/// the registry's (one fewer each), and a checked output is validated on the tree it serialises
/// into rather than its text parsed back, which owns its strings (two more for this tool's
/// output, ~1,250 instructions fewer): now 10 / 5 / 3 in `-p tool-core`, 13 / 8 / 5 in the
/// workspace. The bounds hold the workspace figures plus one.
const TYPED_BOUND: usize = 14;
const VALIDATED_BOUND: usize = 9;
const NOOP_BOUND: usize = 6;

/// The mean number of allocations of one call of `id` with `args`, over many calls after a
/// warm-up (the first calls fill per-process caches).
fn allocations_per_call(rt: &tokio::runtime::Runtime, registry: &Registry, id: &str, args: &str) -> usize {
    const CALLS: usize = 200;
    rt.block_on(async {
        for _ in 0..10 {
            registry.call(id, args, CallOptions::default()).await.unwrap();
        }
        let counted = Counted::start();
        for _ in 0..CALLS {
            let out = registry.call(id, args, CallOptions::default()).await.unwrap();
            std::hint::black_box(out);
        }
        counted.total().div_ceil(CALLS)
    })
}

#[test]
fn a_happy_path_call_allocates_a_bounded_number_of_times() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let registry = Registry::from_iter([
        forecast::tool().unwrap(),
        forecast_struct::tool().unwrap(),
        bounded::tool().unwrap(),
        plain_output::tool().unwrap(),
        checked_output::tool().unwrap(),
    ]);
    assert_eq!(registry.skips_input_validation("bench-forecast"), Some(true));
    assert_eq!(registry.skips_input_validation("alloc-forecast-struct"), Some(false));
    assert_eq!(registry.skips_input_validation("alloc-bounded"), Some(false));
    let noop = DynamicTool::builder("noop", "Does nothing")
        .handler(|_, _| async { Ok(serde_json::Value::Null) })
        .unwrap();
    let small = Registry::from_iter([noop]);

    let typed = allocations_per_call(&rt, &registry, "bench-forecast", ARGS);
    let user_struct = allocations_per_call(&rt, &registry, "alloc-forecast-struct", ARGS);
    let validated = allocations_per_call(&rt, &registry, "alloc-bounded", r#"{"days": 3}"#);
    let fixed = allocations_per_call(&rt, &small, "noop", "{}");
    // The output check serialises the output into a tree (one allocation for a list): a call whose
    // output type is vouched for skips it, the same output in a user's type does not.
    assert_eq!(registry.skips_output_validation("alloc-plain-output"), Some(true));
    assert_eq!(registry.skips_output_validation("alloc-checked-output"), Some(false));
    let plain = allocations_per_call(&rt, &registry, "alloc-plain-output", r#"{"n": 3}"#);
    let checked = allocations_per_call(&rt, &registry, "alloc-checked-output", r#"{"n": 3}"#);
    eprintln!("allocations per call: vouched output {plain}, checked output {checked}");
    assert!(
        plain < checked,
        "the vouched output was checked: {plain} allocations, {checked} when checked"
    );
    eprintln!("allocations per call: typed {typed}, user struct {user_struct}, validated {validated}, no-op {fixed}");
    assert!(typed <= TYPED_BOUND, "a typed call allocates {typed} times (bound {TYPED_BOUND})");
    assert!(
        user_struct <= TYPED_BOUND,
        "a typed call that validates allocates {user_struct} times (bound {TYPED_BOUND})"
    );
    assert!(
        validated <= VALIDATED_BOUND,
        "a validated call allocates {validated} times (bound {VALIDATED_BOUND})"
    );
    assert!(fixed <= NOOP_BOUND, "a no-op call allocates {fixed} times (bound {NOOP_BOUND})");
    // The refusal still lists what is wrong for the tool that validates.
    let refused = rt
        .block_on(registry.call("alloc-bounded", r#"{"days": 0}"#, CallOptions::default()))
        .unwrap_err();
    assert!(refused.message().contains("/days"), "{refused}");
}
