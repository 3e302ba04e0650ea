//! Bounded evaluation of an `evalexpr` expression.
//!
//! `evalexpr` builds its operator tree by descending the tree's right edge and evaluates it by
//! recursion, with no limit on either, and its values may grow without bound (`a = a + a`
//! doubles a string). Here the text is screened before the tree is built (parenthesis depth and
//! the operators that deepen the right edge: unary `-`/`!`, `^` and assignments), and the tree
//! is evaluated bottom-up with an explicit stack, one node at a time: each node's value is
//! checked against the size limits before anything uses it, and the number of evaluated nodes
//! is counted. A few built-in functions that overflow (a panic in `evalexpr`) are refused with
//! an error instead.

use evalexpr::{ContextWithMutableVariables, DefaultNumericTypes, Node, Operator, Value as Expr};
use tool_core::ToolError;

use super::{MAX_CHAINED_OPERATORS, MAX_NESTING, MAX_OPERATIONS, MAX_TEXT_BYTES, MAX_TUPLE_DEPTH, MAX_TUPLE_ITEMS};

type Num = DefaultNumericTypes;

/// Whether the last significant character ends a value (so a following `-` is a subtraction).
fn ends_value(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | ')' | '"')
}

/// Whether `c` may be part of an identifier or a number.
fn in_word(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | ':')
}

/// Whether the text after a word starts a value, which makes the word a function applied to it
/// (`f x`, `floor 2.5`, `f(1)`): like a unary operator, it nests what follows one level deeper.
fn starts_value(rest: &std::iter::Peekable<std::str::Chars<'_>>) -> bool {
    let mut rest = rest.clone().skip_while(|c| c.is_whitespace());
    rest.next().is_some_and(|c| in_word(c) || matches!(c, '(' | '"'))
}

/// Screens the text before `evalexpr` builds a tree from it: the nesting of parentheses and
/// the number of operators that make the tree's right edge deeper (unary operators, function
/// applications, assignments and powers). `evalexpr` starts a new
/// tree for each parenthesised group, statement (`;`) and tuple item (`,`), so the operators
/// are counted per part, with a counter per open parenthesis.
pub(super) fn screen(expression: &str) -> Result<(), ToolError> {
    let mut chained = vec![0usize];
    let (mut in_string, mut escaped) = (false, false);
    let mut previous: Option<char> = None;
    let mut chars = expression.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            previous = Some(c);
            continue;
        }
        let next = chars.peek().copied();
        let word_ends = in_word(c) && !next.is_some_and(in_word);
        let deepens = match c {
            '-' => !previous.is_some_and(ends_value),
            '!' => next != Some('='),
            '^' => true,
            '=' => next != Some('=') && !previous.is_some_and(|p| matches!(p, '=' | '!' | '<' | '>')),
            _ => word_ends && starts_value(&chars),
        };
        match c {
            '"' => in_string = true,
            '(' => chained.push(0),
            ')' if chained.len() > 1 => drop(chained.pop()),
            ';' | ',' => {
                if let Some(n) = chained.last_mut() {
                    *n = 0;
                }
            }
            _ => {}
        }
        if let Some(n) = chained.last_mut().filter(|_| deepens) {
            *n += 1;
        }
        if chained.len() > MAX_NESTING + 1 {
            return Err(ToolError::new(format!(
                "The expression nests parentheses deeper than {MAX_NESTING} levels (the limit). Compute the inner parts first and pass them as variables."
            )));
        }
        if chained.last().is_some_and(|&n| n > MAX_CHAINED_OPERATORS) {
            return Err(ToolError::new(format!(
                "A part of the expression (a statement, tuple item or parenthesised group) has more than {MAX_CHAINED_OPERATORS} unary (`-`, `!`), power (`^`) and assignment operators and functions applied without parentheses (the limit). Simplify it or split the calculation into smaller steps."
            )));
        }
        if !c.is_whitespace() {
            previous = Some(c);
        }
    }
    Ok(())
}

/// Checks a value against the size limits, without recursion.
fn check_size(value: &Expr<Num>) -> Result<(), ToolError> {
    let (mut text, mut items) = (0usize, 0usize);
    let mut stack = vec![(value, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            Expr::String(s) => text += s.len(),
            Expr::Tuple(tuple) => {
                if depth + 1 > MAX_TUPLE_DEPTH {
                    return Err(ToolError::new(format!(
                        "A tuple would nest deeper than {MAX_TUPLE_DEPTH} levels (the limit for values)."
                    )));
                }
                items += tuple.len();
                stack.extend(tuple.iter().map(|item| (item, depth + 1)));
            }
            _ => {}
        }
        if text > MAX_TEXT_BYTES {
            return Err(ToolError::new(format!(
                "A value would hold more than {MAX_TEXT_BYTES} bytes of text (the limit for a string, or for all strings in a tuple)."
            )));
        }
        if items > MAX_TUPLE_ITEMS {
            return Err(ToolError::new(format!(
                "A tuple would hold more than {MAX_TUPLE_ITEMS} items, nested tuples' items included (the limit for values)."
            )));
        }
    }
    Ok(())
}

/// Refuses the calls of built-in functions that would overflow inside `evalexpr`.
fn check_call(identifier: &str, argument: &Expr<Num>) -> Result<(), ToolError> {
    let refuse = |why: &str| Err(ToolError::new(format!("`{identifier}`: {why}")));
    match (identifier, argument) {
        ("math::abs", Expr::Int(i64::MIN)) => refuse("the absolute value of the smallest integer does not fit in an integer."),
        ("shl" | "shr", Expr::Tuple(args)) => match args.get(1) {
            Some(Expr::Int(shift)) if !(0..64).contains(shift) => refuse("the shift must be between 0 and 63."),
            _ => Ok(()),
        },
        ("str::substring", Expr::Tuple(args)) => {
            let Some(Expr::String(s)) = args.first() else { return Ok(()) };
            let bound = |i: usize| match args.get(i) {
                Some(Expr::Int(n)) => usize::try_from(*n).map_or(true, |n| n > s.len() || s.is_char_boundary(n)),
                _ => true,
            };
            if bound(1) && bound(2) {
                Ok(())
            } else {
                refuse("the start and end are byte offsets and must not fall inside a multi-byte character.")
            }
        }
        _ => Ok(()),
    }
}

/// A node being evaluated: its children are evaluated first, left to right.
struct Frame {
    node: Node<Num>,
    pending: std::vec::IntoIter<Node<Num>>,
    done: Vec<Node<Num>>,
}

impl Frame {
    fn new(mut node: Node<Num>) -> Frame {
        let children = std::mem::take(node.children_mut());
        Frame {
            done: Vec::with_capacity(children.len()),
            pending: children.into_iter(),
            node,
        }
    }
}

/// Drops a tree without recursion.
fn dispose(mut nodes: Vec<Node<Num>>) {
    while let Some(mut node) = nodes.pop() {
        nodes.append(node.children_mut());
    }
}

/// Evaluates the tree bottom-up with an explicit stack; each node becomes a constant holding
/// its value, which is checked before its parent uses it.
pub(super) fn evaluate_tree<C>(root: Node<Num>, context: &mut C, expression: &str) -> Result<Expr<Num>, ToolError>
where
    C: ContextWithMutableVariables<NumericTypes = Num>,
{
    let mut operations = 0usize;
    let mut stack = vec![Frame::new(root)];
    let outcome = loop {
        let Some(frame) = stack.last_mut() else {
            break Err(ToolError::new("The expression has no value."));
        };
        if let Some(child) = frame.pending.next() {
            stack.push(Frame::new(child));
            continue;
        }
        let Some(Frame { mut node, done, .. }) = stack.pop() else {
            continue;
        };
        *node.children_mut() = done;
        if let Err(e) = settle(&mut node, context, expression, &mut operations) {
            dispose(vec![node]);
            break Err(e);
        }
        match stack.last_mut() {
            Some(parent) => parent.done.push(node),
            None => match std::mem::replace(node.operator_mut(), Operator::RootNode) {
                Operator::Const { value } => break Ok(value),
                _ => break Err(ToolError::new("The expression has no value.")),
            },
        }
    };
    for frame in stack {
        dispose(frame.pending.chain(frame.done).chain([frame.node]).collect());
    }
    outcome
}

/// Evaluates one node whose children are already constants, and makes it a constant.
fn settle<C>(node: &mut Node<Num>, context: &mut C, expression: &str, operations: &mut usize) -> Result<(), ToolError>
where
    C: ContextWithMutableVariables<NumericTypes = Num>,
{
    match node.operator() {
        // A variable being assigned stays a name: its parent (`=`, `+=`, …) reads it as one.
        Operator::Const { .. } | Operator::VariableIdentifierWrite { .. } => return Ok(()),
        Operator::FunctionIdentifier { identifier } => {
            if let Some(Operator::Const { value }) = node.children().first().map(Node::operator) {
                check_call(identifier, value)?;
            }
        }
        _ => {}
    }
    *operations += 1;
    if *operations > MAX_OPERATIONS {
        return Err(ToolError::new(format!(
            "The expression needs more than {MAX_OPERATIONS} operations (the limit). Split the calculation into smaller steps."
        )));
    }
    let value = node
        .eval_with_context_mut(context)
        .map_err(|e| ToolError::new(format!("Cannot evaluate `{expression}`: {e}")))?;
    check_size(&value)?;
    *node.operator_mut() = Operator::Const { value };
    node.children_mut().clear();
    Ok(())
}
