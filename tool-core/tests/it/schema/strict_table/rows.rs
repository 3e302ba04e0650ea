//! The rows of the table: each shape with the exact schema the strict pass must give, or the
//! refusal it must make, and the reasoning against OpenAI's rules as a comment per row.

use super::*;

/// `Point` after the strict pass (used by several rows).
fn point() -> Value {
    json!({
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
        "required": ["x", "y"],
        "additionalProperties": false
    })
}

fn ext() -> Value {
    json!({"anyOf": [
        {"type": "string", "enum": ["Empty"]},
        {
            "type": "object",
            "properties": {"Circle": {
                "type": "object", "properties": {"r": {"type": "number"}}, "required": ["r"], "additionalProperties": false
            }},
            "required": ["Circle"],
            "additionalProperties": false
        },
        {"type": "object", "properties": {"Named": {"type": "string"}}, "required": ["Named"], "additionalProperties": false}
    ]})
}

fn internal() -> Value {
    json!({"anyOf": [
        {
            "type": "object",
            "properties": {"kind": {"type": "string", "const": "A"}, "a": {"type": "integer", "minimum": 0, "maximum": 255}},
            "required": ["kind", "a"],
            "additionalProperties": false
        },
        {
            "type": "object",
            "properties": {"kind": {"type": "string", "const": "B"}, "b": {"type": "string"}},
            "required": ["kind", "b"],
            "additionalProperties": false
        }
    ]})
}

/// The `Dn` chain after the pass: `$defs` D1..D(n-1), root = Dn.
fn chain(n: usize) -> Value {
    let u8_schema = json!({"type": "integer", "minimum": 0, "maximum": 255});
    let object = |prop: &str, schema: Value| json!({"type": "object", "properties": {prop: schema}, "required": [prop], "additionalProperties": false});
    let mut defs = serde_json::Map::new();
    defs.insert("D1".into(), object("leaf", u8_schema));
    for i in 2..n {
        defs.insert(format!("D{i}"), object("d", json!({"$ref": format!("#/$defs/D{}", i - 1)})));
    }
    let mut root = object("d", json!({"$ref": format!("#/$defs/D{}", n - 1)}));
    root["$defs"] = Value::Object(defs);
    root
}

pub(super) fn table() -> Vec<Row> {
    vec![
        // Option<String>: not required in the canonical schema, already `type: [string, null]`;
        // strict lists it in `required` and does not add a second null. Description kept.
        row::<OptString>(
            "Option<String>",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"name": {"type": ["string", "null"], "description": "A name"}},
                    "required": ["name"],
                    "additionalProperties": false
                }),
                &[],
            ),
        ),
        // Option<u32>: `format: uint32` is not a supported string format (and numeric formats
        // are type hints), so it goes silently; `minimum: 0` and the `maximum` of a u32 (added
        // by `receive_schema`) are supported numeric bounds.
        row::<OptU32>(
            "Option<u32>",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"n": {"type": ["integer", "null"], "minimum": 0, "maximum": 4294967295u32}},
                    "required": ["n"],
                    "additionalProperties": false
                }),
                &[],
            ),
        ),
        // Option<Option<String>>: schemars collapses it to one nullable string; no double null.
        row::<OptOpt>(
            "Option<Option<String>>",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"v": {"type": ["string", "null"]}},
                    "required": ["v"],
                    "additionalProperties": false
                }),
                &[],
            ),
        ),
        // Option<Struct>: `anyOf [$ref, {type: null}]` is already nullable; the definition gets
        // `additionalProperties: false` and keeps its required list; `format: double` goes.
        row::<OptStruct>(
            "Option<Struct>",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"p": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]}},
                    "required": ["p"],
                    "additionalProperties": false,
                    "$defs": {"Point": point()}
                }),
                &[],
            ),
        ),
        // Vec<Option<i32>>: items may be null (a type list is supported); `int32` format goes.
        row::<VecOpt>(
            "Vec<Option<i32>>",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"v": {"type": "array", "items": {"type": ["integer", "null"], "minimum": i32::MIN, "maximum": i32::MAX}}},
                    "required": ["v"],
                    "additionalProperties": false
                }),
                &[],
            ),
        ),
        // Unit enum: `enum` of strings is supported; a bare `$ref` (no siblings) is kept.
        row::<UnitEnum>(
            "unit enum",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"c": {"$ref": "#/$defs/Color"}},
                    "required": ["c"],
                    "additionalProperties": false,
                    "$defs": {"Color": {"type": "string", "enum": ["Red", "Green"]}}
                }),
                &[],
            ),
        ),
        // Externally tagged enum with data: `oneOf` is unsupported, `anyOf` is; the branches are
        // disjoint (distinct single keys / a string), so `anyOf` accepts exactly the same values.
        // Every branch object (and the nested struct variant) is closed.
        row::<ExtTagged>(
            "externally tagged enum",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"s": {"$ref": "#/$defs/Ext"}},
                    "required": ["s"],
                    "additionalProperties": false,
                    "$defs": {"Ext": ext()}
                }),
                &[],
            ),
        ),
        // Internally tagged (`tag = "kind"`): branches are objects told apart by a `const` tag;
        // `const` is supported, branches closed, `oneOf` → `anyOf`; u8 keeps its bounds.
        row::<IntTagged>(
            "internally tagged enum",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"s": {"$ref": "#/$defs/Internal"}},
                    "required": ["s"],
                    "additionalProperties": false,
                    "$defs": {"Internal": internal()}
                }),
                &[],
            ),
        ),
        // Adjacently tagged (`tag = "t", content = "c"`): like internal tagging, with the content
        // under `c` (a newtype u8 or a struct object, closed too).
        row::<AdjTagged>(
            "adjacently tagged enum",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"s": {"$ref": "#/$defs/Adjacent"}},
                    "required": ["s"],
                    "additionalProperties": false,
                    "$defs": {"Adjacent": {"anyOf": [
                        {
                            "type": "object",
                            "properties": {"t": {"type": "string", "const": "A"}, "c": {"type": "integer", "minimum": 0, "maximum": 255}},
                            "required": ["t", "c"],
                            "additionalProperties": false
                        },
                        {
                            "type": "object",
                            "properties": {
                                "t": {"type": "string", "const": "B"},
                                "c": {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"], "additionalProperties": false}
                            },
                            "required": ["t", "c"],
                            "additionalProperties": false
                        }
                    ]}}
                }),
                &[],
            ),
        ),
        // Untagged: schemars already emits `anyOf`; only the `int64` format goes.
        row::<UntaggedS>(
            "untagged enum",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"s": {"$ref": "#/$defs/Untagged"}},
                    "required": ["s"],
                    "additionalProperties": false,
                    "$defs": {"Untagged": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}
                }),
                &[],
            ),
        ),
        // HashMap<String, T>: `additionalProperties` is a schema; strict needs it `false` with
        // every key listed, which a map cannot do: refused (never silently closed to `{}`).
        row::<HMap>("HashMap<String, u8>", Error("/properties/m", "a map (`additionalProperties`")),
        // BTreeMap: the same schema shape as HashMap, the same refusal.
        row::<BMap>("BTreeMap<String, String>", Error("/properties/m", "cannot be strict")),
        // Recursion (a tree node with children: Vec<Node>): `$defs` + `$ref` recursion is
        // supported by OpenAI strict; kept, definition closed.
        row::<Tree>(
            "recursive tree",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"root": {"$ref": "#/$defs/Node"}},
                    "required": ["root"],
                    "additionalProperties": false,
                    "$defs": {"Node": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                        "required": ["name", "children"],
                        "additionalProperties": false
                    }}
                }),
                &[],
            ),
        ),
        // Tuple (u8, String): `prefixItems` is not in the supported list and OpenAI rejects it;
        // turning it into `items: anyOf` would lose the positions: refused.
        row::<Tuple>("tuple (u8, String)", Error("/properties/t", "tuple (`prefixItems`)")),
        // [f64; 3]: homogeneous `items` with `minItems`/`maxItems`, all supported.
        row::<FixedArray>(
            "[f64; 3]",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"a": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3}},
                    "required": ["a"],
                    "additionalProperties": false
                }),
                &[],
            ),
        ),
        // #[serde(flatten)] of a struct: schemars merges the fields into one object; the optional
        // `b` joins `required` (after the originally required ones) as a nullable boolean.
        row::<Flattened>(
            "#[serde(flatten)] struct",
            Schema(
                json!({
                    "type": "object",
                    "properties": {
                        "x": {"type": "integer", "minimum": 0, "maximum": 255},
                        "a": {"type": "string"},
                        "b": {"type": ["boolean", "null"]}
                    },
                    "required": ["x", "a", "b"],
                    "additionalProperties": false
                }),
                &[],
            ),
        ),
        // Numeric formats u8/u64/i64/f32/f64: every `format` goes (none is a supported string
        // format); the unsigned bounds stay (numeric bounds are supported).
        row::<Nums>(
            "numeric formats",
            Schema(
                json!({
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer", "minimum": 0, "maximum": 255},
                        "b": {"type": "integer", "minimum": 0},
                        "c": {"type": "integer"},
                        "d": {"type": "number"},
                        "e": {"type": "number"}
                    },
                    "required": ["a", "b", "c", "d", "e"],
                    "additionalProperties": false
                }),
                &[],
            ),
        ),
        // #[serde(default)] fields: not required and carrying `default`, which strict does not
        // support: `default` goes, the fields become required + nullable (a null comes back as
        // "absent" through the runtime's forgiveness, so serde's default applies).
        row::<Defaults>(
            "#[serde(default)] fields",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"a": {"type": ["integer", "null"], "minimum": 0, "maximum": u32::MAX}, "b": {"type": ["string", "null"]}},
                    "required": ["a", "b"],
                    "additionalProperties": false
                }),
                &[],
            ),
        ),
        // rename_all = "camelCase": names are what serde reads; lastName optional → nullable.
        row::<Camel>(
            "rename_all camelCase",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"firstName": {"type": "string"}, "lastName": {"type": ["string", "null"]}},
                    "required": ["firstName", "lastName"],
                    "additionalProperties": false
                }),
                &[],
            ),
        ),
        // deny_unknown_fields: already `additionalProperties: false`; kept as is.
        row::<Deny>(
            "deny_unknown_fields",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"a": {"type": "string"}},
                    "required": ["a"],
                    "additionalProperties": false
                }),
                &[],
            ),
        ),
        // A string with `format: date-time` (schemars extend): a supported format, kept.
        row::<DateString>(
            "date-time string",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"at": {"type": "string", "format": "date-time"}},
                    "required": ["at"],
                    "additionalProperties": false
                }),
                &[],
            ),
        ),
        // #[schemars(email)] → `format: email`: supported, kept.
        row::<EmailString>(
            "email string",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"to": {"type": "string", "format": "email"}},
                    "required": ["to"],
                    "additionalProperties": false
                }),
                &[],
            ),
        ),
        // HashSet<String> → `uniqueItems: true`: not in OpenAI's supported array keywords; a pure
        // constraint (the runtime still enforces it), so removed with a warning.
        row::<Set>(
            "HashSet<String>",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
                    "required": ["tags"],
                    "additionalProperties": false
                }),
                &["`/properties/tags`: removed `uniqueItems`"],
            ),
        ),
        // Box<T>: the same schema as T (a bare `$ref`).
        row::<Boxed>(
            "Box<Struct>",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"b": {"$ref": "#/$defs/Point"}},
                    "required": ["b"],
                    "additionalProperties": false,
                    "$defs": {"Point": point()}
                }),
                &[],
            ),
        ),
        // Nested structs 3 deep (4 objects with the root): within 10 levels; every level closed.
        row::<Deep3>(
            "nested structs 3 deep",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"l1": {"$ref": "#/$defs/L1"}},
                    "required": ["l1"],
                    "additionalProperties": false,
                    "$defs": {
                        "L1": {"type": "object", "properties": {"l2": {"$ref": "#/$defs/L2"}}, "required": ["l2"], "additionalProperties": false},
                        "L2": {"type": "object", "properties": {"l3": {"$ref": "#/$defs/L3"}}, "required": ["l3"], "additionalProperties": false},
                        "L3": {
                            "type": "object",
                            "properties": {"v": {"type": "integer", "minimum": 0, "maximum": 255}},
                            "required": ["v"],
                            "additionalProperties": false
                        }
                    }
                }),
                &[],
            ),
        ),
        // 10 nested objects (root D10 … D1): exactly the limit, accepted.
        Row {
            name: "10 levels of nesting",
            schema: receive_schema::<D10>(),
            expect: Schema(chain(10), &[]),
        },
        // 11 nested objects: over the 10-level limit; the error points at the object that is
        // level 11 (the innermost definition).
        row::<D11>("11 levels of nesting", Error("/$defs/D1", "nested 11 levels deep")),
        // serde_json::Value → the `true` schema (any JSON): strict needs every value typed, and
        // "any" cannot be written in the strict subset: refused, naming the field.
        row::<AnyValue>("serde_json::Value field", Error("/properties/v", "accepts any JSON")),
        // A flattened enum: an object with `properties` and `oneOf` at once. Closed objects cannot
        // express it (each branch would forbid the other's properties), and the root cannot be a
        // union: refused.
        row::<FlatEnum>("#[serde(flatten)] enum", Error("", "`#[serde(flatten)]`ed enum")),
        // A flattened HashMap<String, Value> → `additionalProperties: true`: an open object, not
        // strict-expressible: refused.
        row::<FlatMap>("#[serde(flatten)] map", Error("", "a map (`additionalProperties`")),
        // Documented struct field: `{$ref, description}`. OpenAI refuses siblings of `$ref`, so
        // the definition is inlined with the description (as OpenAI's SDK does); the optional
        // documented fields keep the description next to `anyOf` (allowed there).
        row::<Documented>(
            "documented struct fields",
            Schema(
                json!({
                    "type": "object",
                    "properties": {
                        "p": {
                            "type": "object",
                            "description": "The point",
                            "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                            "required": ["x", "y"],
                            "additionalProperties": false
                        },
                        "q": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}], "description": "Maybe a point"},
                        "c": {"anyOf": [{"$ref": "#/$defs/Color"}, {"type": "null"}], "description": "A color"}
                    },
                    "required": ["p", "c", "q"],
                    "additionalProperties": false,
                    "$defs": {"Color": {"type": "string", "enum": ["Red", "Green"]}, "Point": point()}
                }),
                &[],
            ),
        ),
        // Documented unit enum: schemars emits `oneOf` of `const`s (to carry the descriptions);
        // `oneOf` → `anyOf` (consts are disjoint, same values); the optional one gets a null branch.
        row::<DocEnum>(
            "documented unit enum",
            Schema(
                json!({
                    "type": "object",
                    "properties": {
                        "c": {"$ref": "#/$defs/DocColor"},
                        "o": {"anyOf": [{"$ref": "#/$defs/DocColor"}, {"type": "null"}]}
                    },
                    "required": ["c", "o"],
                    "additionalProperties": false,
                    "$defs": {"DocColor": {"anyOf": [
                        {"type": "string", "const": "Red", "description": "Like blood"},
                        {"type": "string", "const": "Green", "description": "Like grass"}
                    ]}}
                }),
                &[],
            ),
        ),
        // Validation attributes: `minimum`/`maximum`, `pattern`, `minItems` are supported and
        // kept; `minLength`/`maxLength` are not in the supported list: removed with a warning.
        row::<Validated>(
            "length / range / regex",
            Schema(
                json!({
                    "type": "object",
                    "properties": {
                        "s": {"type": "string"},
                        "n": {"type": "integer", "minimum": 1, "maximum": 10},
                        "p": {"type": "string", "pattern": "^a+$"},
                        "v": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 255}, "minItems": 2}
                    },
                    "required": ["s", "n", "p", "v"],
                    "additionalProperties": false
                }),
                &["`/properties/s`: removed `maxLength`, `minLength`"],
            ),
        ),
        // Option<enum with data>: `anyOf [$ref, null]` already nullable; definitions as above.
        row::<OptEnums>(
            "Option<data enums>",
            Schema(
                json!({
                    "type": "object",
                    "properties": {
                        "e": {"anyOf": [{"$ref": "#/$defs/Ext"}, {"type": "null"}]},
                        "i": {"anyOf": [{"$ref": "#/$defs/Internal"}, {"type": "null"}]}
                    },
                    "required": ["e", "i"],
                    "additionalProperties": false,
                    "$defs": {"Ext": ext(), "Internal": internal()}
                }),
                &[],
            ),
        ),
        // Option<Vec<String>>: `type: [array, null]`, already nullable.
        row::<OptVec>(
            "Option<Vec<String>>",
            Schema(
                json!({
                    "type": "object",
                    "properties": {"v": {"type": ["array", "null"], "items": {"type": "string"}}},
                    "required": ["v"],
                    "additionalProperties": false
                }),
                &[],
            ),
        ),
        // Option<(u8, u8)>: still a tuple; refused like the plain one.
        row::<OptTuple>("Option<tuple>", Error("/properties/t", "tuple (`prefixItems`)")),
        // An enum of 1001 unit values (hand-written: no Rust enum that large): over the limit of
        // 1000 enum values per schema.
        Row {
            name: "1001 enum values",
            schema: json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {"code": {"$ref": "#/$defs/Code"}},
                "required": ["code"],
                "$defs": {"Code": {"type": "string", "enum": (0..1001).map(|i| format!("C{i:04}")).collect::<Vec<_>>()}}
            }),
            expect: Error("/$defs/Code", "1001 enum values"),
        },
    ]
}
