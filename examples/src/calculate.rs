//! `calculate`: evaluates an arithmetic or logical expression with the `evalexpr` crate.
//!
//! Shows plain parameters (`expression`, and an optional `variables` map) becoming the input
//! object, with their doc comments as property descriptions.
//!
//! Every expression is bounded (the private `bounded` module does the work): its length, its
//! nesting, the number of operations evaluated and the size of every value, so no input can
//! exhaust the stack, the memory or the time of the process.

use std::collections::BTreeMap;

use evalexpr::{ContextWithMutableVariables, DefaultNumericTypes, HashMapContext, Value as Expr};
use tool_core::prelude::*;

mod bounded;

/// Longest accepted expression, in characters.
pub const MAX_EXPRESSION_CHARS: usize = 2_000;
/// Deepest accepted nesting of parentheses.
pub const MAX_NESTING: usize = 64;
/// Most unary (`-`, `!`), power (`^`) and assignment (`=`, `+=`, …) operators and functions
/// applied without parentheses (`floor x`) in one part of an expression (a statement, tuple
/// item or parenthesised group): each of them nests the expression one level deeper.
pub const MAX_CHAINED_OPERATORS: usize = 256;
/// Most operations (operators, function calls, variable reads) evaluated for one expression.
pub const MAX_OPERATIONS: usize = 1_500;
/// Most bytes of text in one value: a string, or all the strings of a tuple together.
pub const MAX_TEXT_BYTES: usize = 10_000;
/// Most items in one tuple value, the items of nested tuples included.
pub const MAX_TUPLE_ITEMS: usize = 1_000;
/// Deepest nesting of tuples in one value.
pub const MAX_TUPLE_DEPTH: usize = 16;
/// Most entries in `variables`.
pub const MAX_VARIABLES: usize = 100;

/// The value of an expression.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Calculation {
    /// The expression as given.
    pub expression: String,
    /// The value: a number, boolean, string, array (for a tuple such as `1, 2`) or null (for an
    /// expression ending in `;`).
    pub result: Value,
    /// The value's type: `int`, `float`, `boolean`, `string`, `tuple` or `empty`.
    pub result_type: String,
}

fn to_json(value: &Expr<DefaultNumericTypes>) -> Result<(Value, &'static str), ToolError> {
    Ok(match value {
        Expr::Int(i) => (json!(i), "int"),
        Expr::Float(f) if f.is_finite() => (json!(f), "float"),
        Expr::Float(f) => {
            return Err(ToolError::new(format!(
                "The result is {f}, which is not a finite number (division of a float by zero, or an overflow)."
            )));
        }
        Expr::Boolean(b) => (json!(b), "boolean"),
        Expr::String(s) => (json!(s), "string"),
        Expr::Tuple(items) => (
            Value::Array(items.iter().map(|v| to_json(v).map(|(v, _)| v)).collect::<Result<_, _>>()?),
            "tuple",
        ),
        Expr::Empty => (Value::Null, "empty"),
    })
}

/// Evaluates `expression` with the constants `pi` and `e` and the given variables bound.
pub fn evaluate(expression: &str, variables: &BTreeMap<String, f64>) -> Result<Calculation, ToolError> {
    let chars = expression.chars().count();
    if chars > MAX_EXPRESSION_CHARS {
        return Err(ToolError::new(format!(
            "The expression is {chars} characters long; the limit is {MAX_EXPRESSION_CHARS}. Split the calculation into smaller steps."
        )));
    }
    if variables.len() > MAX_VARIABLES {
        return Err(ToolError::new(format!(
            "{} variables were given; the limit is {MAX_VARIABLES}.",
            variables.len()
        )));
    }
    bounded::screen(expression)?;
    if expression.trim().is_empty() {
        return Err(ToolError::new("The expression is empty."));
    }
    let mut context = HashMapContext::<DefaultNumericTypes>::new();
    let constants = [("pi", std::f64::consts::PI), ("e", std::f64::consts::E)];
    let bindings = constants
        .iter()
        .filter(|(name, _)| !variables.contains_key(*name))
        .map(|&(n, v)| (n, v))
        .chain(variables.iter().map(|(n, v)| (n.as_str(), *v)));
    for (name, value) in bindings {
        context
            .set_value(name.to_owned(), Expr::Float(value))
            .map_err(|e| ToolError::new(format!("Cannot bind the variable `{name}`: {e}")))?;
    }
    let tree = evalexpr::build_operator_tree::<DefaultNumericTypes>(expression)
        .map_err(|e| ToolError::new(format!("Cannot evaluate `{expression}`: {e}")))?;
    let value = bounded::evaluate_tree(tree, &mut context, expression)?;
    let (result, result_type) = to_json(&value)?;
    Ok(Calculation {
        expression: expression.to_owned(),
        result,
        result_type: result_type.to_owned(),
    })
}

/// Evaluate a mathematical or logical expression and return its exact value
///
/// Operators: `+ - * / % ^` (power), comparisons, `&& || !`, `;` to chain and `=` to assign
/// temporary variables (`r = 2.0; pi * r^2`). Functions: `min`, `max`, `floor`, `round`, `ceil`,
/// `if(cond, a, b)`, `math::sqrt`, `math::ln`, `math::log10`, `math::sin` (radians) and the other
/// `math::` functions of evalexpr. Constants `pi` and `e` are predefined.
/// Note: integer division truncates (`7 / 2` is `3`); write `7.0 / 2` for `3.5`.
///
/// Limits: at most 2000 characters, 64 levels of parentheses, 256 unary/power/assignment
/// operators and functions applied without parentheses per statement or group, and 1500
/// operations; a value holds at most 10000 bytes of text and a tuple at most
/// 1000 items nested 16 deep; at most 100 variables. Exceeding one is an error naming it.
#[tool(
    id = "calculate",
    blocking,
    tags = ["math", "offline"],
    // The model may call it, and so may code it runs (Anthropic's and OpenAI's programmatic
    // tool calling): a loop of calculations costs one turn.
    allowed_callers = ["direct", "programmatic"],
    // Plain parameters: the examples are values of the generated input struct, `InputOf<calculate>`.
    input_examples = [
        InputOf::<calculate> { expression: "(2.5 + 3) * 4".into(), variables: None },
        InputOf::<calculate> {
            expression: "price * qty * (1 - discount)".into(),
            variables: Some(BTreeMap::from([("price".into(), 19.99), ("qty".into(), 3.0), ("discount".into(), 0.1)])),
        },
    ],
    mcp(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
)]
pub async fn calculate(
    /// The expression, e.g. `(2.5 + 3) * 4` or `math::sqrt(2) > 1.4`.
    expression: String,
    /// Values for variables used in the expression, e.g. `{"price": 19.99, "qty": 3}`. Bound
    /// as floats.
    variables: Option<BTreeMap<String, f64>>,
) -> Result<Calculation, ToolError> {
    evaluate(&expression, &variables.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(expr: &str) -> Value {
        evaluate(expr, &BTreeMap::new()).unwrap().result
    }

    #[test]
    fn arithmetic_keeps_integers_and_floats_apart() {
        assert_eq!(eval("1 + 2 * 3"), json!(7));
        assert_eq!(eval("(2.5 + 3) * 4"), json!(22.0));
        assert_eq!(eval("7 / 2"), json!(3));
        assert_eq!(eval("7.0 / 2"), json!(3.5));
        assert_eq!(eval("2 ^ 10"), json!(1024.0));
        assert_eq!(eval("-7 % 3"), json!(-1));
        assert_eq!(evaluate("1 + 1", &BTreeMap::new()).unwrap().result_type, "int");
    }

    #[test]
    fn functions_constants_logic_and_scripts() {
        assert_eq!(eval("math::sqrt(16)"), json!(4.0));
        assert_eq!(eval("max(1, 5, 3)"), json!(5));
        assert_eq!(eval("round(pi * 1000)"), json!(3142.0));
        assert_eq!(eval("math::ln(e)"), json!(1.0));
        assert_eq!(eval("3 > 2 && !(1 == 2)"), json!(true));
        assert_eq!(eval("if(2 > 1, \"yes\", \"no\")"), json!("yes"));
        assert_eq!(eval("r = 2.0; pi * r^2"), json!(std::f64::consts::PI * 4.0));
        assert_eq!(eval("1, 2.5, \"x\""), json!([1, 2.5, "x"]));
        assert_eq!(eval("a = 1;"), Value::Null);
    }

    #[test]
    fn variables_are_bound_as_floats_and_may_shadow_constants() {
        let vars = BTreeMap::from([("price".to_owned(), 19.99), ("qty".to_owned(), 3.0)]);
        let c = evaluate("price * qty", &vars).unwrap();
        assert_eq!(c.result_type, "float");
        assert!((c.result.as_f64().unwrap() - 59.97).abs() < 1e-9);
        let vars = BTreeMap::from([("e".to_owned(), 2.0)]);
        assert_eq!(evaluate("e * 2", &vars).unwrap().result, json!(4.0));
    }

    #[test]
    fn errors_are_readable() {
        let e = evaluate("x + 1", &BTreeMap::new()).unwrap_err();
        assert!(e.message().starts_with("Cannot evaluate `x + 1`:"), "{e}");
        assert!(e.message().contains('x'), "{e}");
        let e = evaluate("1 / 0", &BTreeMap::new()).unwrap_err();
        assert!(e.message().starts_with("Cannot evaluate"), "{e}");
        let e = evaluate("1.0 / 0", &BTreeMap::new()).unwrap_err();
        assert!(e.message().contains("not a finite number"), "{e}");
        let e = evaluate("9223372036854775807 + 1", &BTreeMap::new()).unwrap_err();
        assert!(e.message().starts_with("Cannot evaluate"), "{e}");
        assert!(evaluate("  ", &BTreeMap::new()).unwrap_err().message().contains("empty"));
        assert!(evaluate("(1 + ", &BTreeMap::new()).is_err());
    }

    #[test]
    fn oversized_and_deeply_nested_expressions_are_refused_before_parsing() {
        let long = "1+".repeat(MAX_EXPRESSION_CHARS) + "1";
        assert!(evaluate(&long, &BTreeMap::new()).unwrap_err().message().contains("limit"));
        let deep = "(".repeat(MAX_NESTING + 1) + "1" + &")".repeat(MAX_NESTING + 1);
        assert!(evaluate(&deep, &BTreeMap::new()).unwrap_err().message().contains("nests"));
        let ok = "(".repeat(MAX_NESTING) + "1" + &")".repeat(MAX_NESTING);
        assert_eq!(evaluate(&ok, &BTreeMap::new()).unwrap().result, json!(1));
    }

    #[test]
    fn the_longest_allowed_chain_does_not_overflow_the_stack() {
        // Evaluate on a thread with a small (tokio-worker-sized) stack.
        let chain = "1+".repeat(MAX_EXPRESSION_CHARS / 2 - 1) + "1";
        let out = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || evaluate(&chain, &BTreeMap::new()).map(|c| c.result))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(out.unwrap(), json!(MAX_EXPRESSION_CHARS / 2));
    }

    #[test]
    fn bounded_evaluation_agrees_with_evalexpr() {
        for expr in [
            "a = 1; (a, (a = 2; a))",
            "a = 2.0; b = a ^ 3; a += b; a",
            "x = \"ab\"; x = x + x; (x, len(x), str::to_uppercase(x))",
            "if(1 < 2, -3, 4) * max(1, 2, 3) % 5",
            "!(true && false) || 1 == 2",
            "f = 1.5; f *= 2; f -= 1; f",
            "- - -1",
            "2 ^ 3 ^ 2",
            "(1, (2, 3), \"x\")",
            "str::substring(\"héllo\", 0, 1)",
        ] {
            let mut context = HashMapContext::<DefaultNumericTypes>::new();
            let expected = evalexpr::eval_with_context_mut(expr, &mut context).unwrap();
            let (expected, _) = to_json(&expected).unwrap();
            assert_eq!(eval(expr), expected, "{expr}");
        }
    }

    #[test]
    fn operator_chains_operations_and_values_are_bounded() {
        let err = |expr: &str| evaluate(expr, &BTreeMap::new()).unwrap_err().message().to_owned();
        // Chains are counted per statement: a long script of short statements is fine.
        let script = "a = 1;".to_owned() + &"a = a + 1;".repeat(150) + "a";
        assert_eq!(eval(&script), json!(151));
        assert_eq!(eval(&("-".repeat(MAX_CHAINED_OPERATORS) + "1")), json!(1));
        assert!(err(&("-".repeat(MAX_CHAINED_OPERATORS + 1) + "1")).contains("more than 256 unary"));
        assert!(err(&("2".to_owned() + &"^2".repeat(MAX_CHAINED_OPERATORS + 1))).contains("256"));
        // A function applied without parentheses nests what follows, like a unary operator.
        assert_eq!(eval(&("floor ".repeat(MAX_CHAINED_OPERATORS) + "1.5")), json!(1.0));
        assert!(err(&("f ".repeat(MAX_CHAINED_OPERATORS + 1) + "1")).contains("256"));
        // Variables and calls with parentheses are not chains.
        let sum = (0..300).map(|i| format!("x{i}")).collect::<Vec<_>>().join("+");
        let vars: BTreeMap<String, f64> = (0..100).map(|i| (format!("x{i}"), 1.0)).collect();
        assert!(evaluate(&sum, &vars).unwrap_err().message().contains("x100"));
        assert_eq!(eval("max(1,2)+".repeat(200).trim_end_matches('+')), json!(400));
        // Operations.
        let many = ("-".repeat(250) + "1;").repeat(7);
        assert!(err(&many).contains("more than 1500 operations"), "{}", err(&many));
        // Values: 5 * 2^10 bytes of text are fine, 5 * 2^11 are not.
        let doubled = |n: usize| "a = \"xxxxx\";".to_owned() + &"a = a + a;".repeat(n) + "len(a)";
        assert_eq!(eval(&doubled(10)), json!(5 * 1024));
        assert!(err(&doubled(11)).contains("more than 10000 bytes of text"));
        let tuples = |n: usize| "t = (1, 1);".to_owned() + &"t = (t, t);".repeat(n) + "len(t)";
        assert_eq!(eval(&tuples(7)), json!(2));
        assert!(err(&tuples(9)).contains("more than 1000 items"));
        let nested = "t = (1, 1);".to_owned() + &"t = (t, 1);".repeat(MAX_TUPLE_DEPTH + 1);
        assert!(err(&nested).contains("deeper than 16 levels"), "{}", err(&nested));
        let vars: BTreeMap<String, f64> = (0..=MAX_VARIABLES).map(|i| (format!("v{i}"), 1.0)).collect();
        assert!(evaluate("1", &vars).unwrap_err().message().contains("the limit is 100"));
    }

    #[test]
    fn builtins_that_overflow_are_errors_not_panics() {
        let err = |expr: &str| evaluate(expr, &BTreeMap::new()).unwrap_err().message().to_owned();
        assert!(err("shl(1, 64)").contains("between 0 and 63"));
        assert!(err("shr(1, -1)").contains("between 0 and 63"));
        assert_eq!(eval("shl(1, 62)"), json!(1i64 << 62));
        assert!(err("math::abs(-9223372036854775807 - 1)").contains("smallest integer"));
        assert_eq!(eval("math::abs(-5)"), json!(5));
        assert!(err("str::substring(\"é\", 0, 1)").contains("multi-byte"));
        assert_eq!(eval("str::substring(\"é\", 0, 2)"), json!("é"));
    }

    #[test]
    fn the_tool_description_states_the_limits() {
        let spec = Registry::global().get("calculate").unwrap().spec().clone();
        let text = format!("{spec:?}");
        for limit in [
            MAX_EXPRESSION_CHARS,
            MAX_NESTING,
            MAX_CHAINED_OPERATORS,
            MAX_OPERATIONS,
            MAX_TEXT_BYTES,
        ] {
            assert!(text.contains(&format!(" {limit} ")), "{limit} is not in the description");
        }
        for limit in [MAX_TUPLE_ITEMS, MAX_TUPLE_DEPTH, MAX_VARIABLES] {
            assert!(text.contains(&format!(" {limit} ")), "{limit} is not in the description");
        }
    }

    #[tokio::test]
    async fn typed_examples_are_valid_calls() {
        let spec = Registry::global().get("calculate").unwrap().spec().clone();
        assert_eq!(spec.presentation.input_examples.len(), 2);
        // An absent `Option` parameter is left out of the serialised example.
        assert_eq!(spec.presentation.input_examples[0], json!({"expression": "(2.5 + 3) * 4"}));
        let mut results = Vec::new();
        for example in spec.presentation.input_examples {
            let out = Registry::global().call("calculate", example, CallOptions::default()).await.unwrap();
            results.push(out.value()["result"].as_f64().unwrap());
        }
        assert_eq!(results[0], 22.0);
        assert!((results[1] - 53.973).abs() < 1e-9, "{results:?}");
    }

    #[tokio::test]
    async fn plain_parameters_become_the_input_object() {
        let tool = Registry::global().get("calculate").unwrap();
        let schema = &tool.spec().schemas.input;
        assert_eq!(schema["required"], json!(["expression"]));
        assert!(
            schema["properties"]["variables"]["description"]
                .as_str()
                .unwrap()
                .starts_with("Values for variables")
        );
        let out = Registry::global()
            .call(
                "calculate",
                json!({"expression": "a * b", "variables": {"a": 6, "b": 7}}),
                CallOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(out.value(), json!({"expression": "a * b", "result": 42.0, "result_type": "float"}));
    }
}
