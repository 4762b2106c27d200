//! The validator against the jsonschema crate (a dev-dependency: the tests check the `--json`
//! events with it) on schemas using every keyword, with hand-picked and generated values.

use serde_json::{json, Value};

use super::Validator;

/// Schemas covering every keyword the validator implements, with values on both sides of each.
fn cases() -> Vec<(Value, Vec<Value>)> {
    vec![
        (
            json!({"type": "object", "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer"}},
                   "required": ["ok"], "additionalProperties": false}),
            vec![
                json!({"ok": true}),
                json!({"ok": 1}),
                json!({"n": 2}),
                json!({"ok": false, "n": 2.0}),
                json!({"ok": false, "n": 2.5}),
                json!({"ok": true, "x": 1}),
                json!([]),
                json!(null),
            ],
        ),
        (
            json!({"type": ["string", "null"], "minLength": 2, "maxLength": 4, "pattern": "^a.*z$"}),
            vec![
                json!("az"),
                json!("abz"),
                json!("a"),
                json!("abcdz"),
                json!("bz"),
                json!(null),
                json!(3),
                json!("aéz"),
            ],
        ),
        (
            json!({"type": "number", "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 0.1}),
            vec![json!(0), json!(0.3), json!(9.9), json!(10), json!(-0.1), json!(0.35), json!(5), json!(1e-3)],
        ),
        (
            json!({"maximum": 3, "exclusiveMinimum": -1, "multipleOf": 3}),
            vec![json!(3), json!(0), json!(-1), json!(6), json!(2), json!(3.0), json!("x")],
        ),
        (
            json!({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3, "uniqueItems": true}),
            vec![
                json!([1]),
                json!([]),
                json!([1, 2, 3, 4]),
                json!([1, 1]),
                json!([1, 1.0]),
                json!([1, "a"]),
                json!([1, 2]),
            ],
        ),
        (
            json!({"prefixItems": [{"type": "string"}, {"type": "number"}], "items": false}),
            vec![json!(["a", 1]), json!(["a"]), json!(["a", 1, 2]), json!([1, "a"]), json!([])],
        ),
        (
            json!({"contains": {"const": 2}, "minContains": 2, "maxContains": 3}),
            vec![json!([2, 2]), json!([2]), json!([2, 2, 2, 2]), json!([1, 2, 2.0]), json!([]), json!("x")],
        ),
        (
            json!({"enum": ["a", 1, null, {"k": [1]}], "const": {"k": [1.0]}}),
            vec![json!({"k": [1]}), json!("a"), json!({"k": [2]}), json!({"k": [1], "j": 0})],
        ),
        (
            json!({"anyOf": [{"type": "string"}, {"minimum": 5}], "not": {"const": "no"}}),
            vec![json!("x"), json!(7), json!(3), json!("no"), json!(null)],
        ),
        (
            json!({"oneOf": [{"type": "integer"}, {"minimum": 2}], "allOf": [{"maximum": 10}]}),
            vec![json!(1), json!(2.5), json!(3), json!(11), json!("s")],
        ),
        (
            json!({"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["a"]}, "else": {"required": ["b"]}}),
            vec![json!({"kind": "a", "a": 1}), json!({"kind": "a", "b": 1}), json!({"b": 1}), json!({}), json!(4)],
        ),
        (
            json!({"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": {"type": "number"},
                   "propertyNames": {"maxLength": 3}, "minProperties": 1, "maxProperties": 2}),
            vec![
                json!({"x-a": "s"}),
                json!({"x-a": 1}),
                json!({"b": 1}),
                json!({"b": "s"}),
                json!({"long": 1}),
                json!({}),
                json!({"a": 1, "b": 2, "c": 3}),
            ],
        ),
        (
            json!({"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}}}),
            vec![json!({"a": 1, "b": 2}), json!({"a": 1}), json!({"c": 1}), json!({"c": 1, "d": 2}), json!({})],
        ),
        (
            json!({"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"},
                   "next": {"$ref": "#/$defs/node"}}, "required": ["v"]}}, "$ref": "#/$defs/node"}),
            vec![
                json!({"v": 1}),
                json!({"v": 1, "next": {"v": 2}}),
                json!({"v": 1, "next": {"w": 2}}),
                json!({"v": "1"}),
            ],
        ),
        (
            json!({"$ref": "#/$defs/pos", "maximum": 5, "$defs": {"pos": {"minimum": 0}}}),
            vec![json!(3), json!(-1), json!(6)],
        ),
        (
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"s": {"type": "string"}},
                   "type": "object", "properties": {"a": {"$ref": "#/definitions/s", "type": "integer"},
                   "t": {"items": [{"type": "string"}], "additionalItems": {"type": "integer"}}},
                   "dependencies": {"a": ["b"], "c": {"required": ["e"]}}}),
            vec![
                json!({"a": "s", "b": 1}),
                json!({"a": 1, "b": 1}),
                json!({"a": "s"}),
                json!({"c": 1}),
                json!({"t": ["a", 1]}),
                json!({"t": ["a", "b"]}),
                json!({"t": [1]}),
            ],
        ),
        (
            json!({"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 3, "exclusiveMaximum": true,
                   "minimum": 1, "exclusiveMinimum": false}),
            vec![json!(3), json!(2.9), json!(1), json!(0)],
        ),
        (json!(false), vec![json!(1), json!(null)]),
        (json!(true), vec![json!(1), json!({"a": []})]),
        (
            json!({"properties": {"a/b": {"type": "string"}, "~c": {"type": "integer"}}}),
            vec![json!({"a/b": "s", "~c": 1}), json!({"a/b": 1}), json!({"~c": "x"})],
        ),
    ]
}

fn reference(schema: &Value) -> jsonschema::Validator {
    jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("the reference refuses {schema}: {e}"))
}

#[test]
fn agrees_with_the_jsonschema_crate_on_every_keyword() {
    for (schema, values) in cases() {
        let ours = Validator::new(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
        let theirs = reference(&schema);
        for v in values {
            assert_eq!(ours.is_valid(&v), theirs.is_valid(&v), "schema {schema}, value {v}: {:?}", ours.errors(&v, 5));
            assert_eq!(ours.errors(&v, 10).is_empty(), theirs.is_valid(&v), "errors agree with is_valid: {schema} {v}");
        }
    }
}

/// A small deterministic generator (xorshift) of JSON values built from the names and numbers
/// the schemas use, so that generated values often meet a keyword's edge.
struct Gen(u64);

impl Gen {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn value(&mut self, depth: u32) -> Value {
        const KEYS: [&str; 12] = ["ok", "n", "a", "b", "c", "d", "e", "v", "next", "kind", "x-a", "long"];
        const NUMS: [f64; 10] = [0.0, 1.0, 2.0, 2.5, 3.0, 5.0, 9.9, 10.0, -1.0, 0.3];
        match self.next(if depth == 0 { 5 } else { 7 }) {
            0 => Value::Null,
            1 => Value::Bool(self.next(2) == 0),
            2 => json!(self.next(12) as i64 - 2),
            3 => json!(NUMS[self.next(10) as usize]),
            4 => json!(["a", "az", "abz", "no", "s", "x-a", ""][self.next(7) as usize]),
            5 => Value::Array((0..self.next(4)).map(|_| self.value(depth - 1)).collect()),
            _ => Value::Object(
                (0..self.next(4)).map(|_| (KEYS[self.next(12) as usize].to_string(), self.value(depth - 1))).collect(),
            ),
        }
    }
}

#[test]
fn agrees_with_the_jsonschema_crate_on_generated_values() {
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let mut disagreements = Vec::new();
    for (schema, _) in cases() {
        let ours = Validator::new(&schema).unwrap();
        let theirs = reference(&schema);
        for _ in 0..400 {
            let v = g.value(3);
            if ours.is_valid(&v) != theirs.is_valid(&v) {
                disagreements.push(format!("{schema} on {v}"));
            }
        }
    }
    assert!(disagreements.is_empty(), "{} disagreements:\n{}", disagreements.len(), disagreements.join("\n"));
}

#[test]
fn errors_say_what_and_where() {
    let s = json!({"type": "object", "properties": {"todos": {"type": "array", "items": {"type": "string"}}},
                   "required": ["todos", "done"], "additionalProperties": false});
    let v = Validator::new(&s).unwrap();
    let errs = v.errors(&json!({"todos": ["a", 3], "x": 1}), 10);
    assert_eq!(
        errs,
        [
            "\"done\" is a required property",
            "at /todos/1: 3 is not of type \"string\"",
            "Additional properties are not allowed ('x' was unexpected)",
        ]
    );
    assert_eq!(v.errors(&json!({"todos": [1, 2, 3]}), 2).len(), 2, "at most the number asked");
}

#[test]
fn what_it_does_not_implement_is_refused_by_name() {
    for (schema, says) in [
        (json!({"unevaluatedProperties": false}), "unevaluatedProperties"),
        (json!({"items": {"$dynamicRef": "#meta"}}), "$dynamicRef"),
        (json!({"$ref": "other.json#/a"}), "does not point into this file"),
        (json!({"$ref": "#/$defs/missing"}), "does not point into this file"),
        (json!({"properties": {"a": {"$id": "a.json"}}}), "nested `$id`"),
        (json!({"pattern": "(?<=a)b"}), "is not supported"),
        (json!({"patternProperties": {"(a)\\1": {}}}), "is not supported"),
        (json!({"type": 12}), "is not a type"),
        (json!({"type": "text"}), "is not a type"),
        (json!({"required": "a"}), "array of strings"),
        (json!({"properties": {"a": 3}}), "an object or a boolean"),
        (json!({"minLength": -1}), "non-negative integer"),
        (json!({"multipleOf": 0}), "above 0"),
    ] {
        let e = Validator::new(&schema).err().unwrap_or_else(|| panic!("{schema} was accepted"));
        assert!(e.contains(says), "{schema}: {e}");
    }
}

#[test]
fn a_reference_loop_ends_in_an_error_not_a_crash() {
    let v = Validator::new(&json!({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})).unwrap();
    assert!(!v.is_valid(&json!(1)));
    assert!(v.errors(&json!(1), 3)[0].contains("nests too deeply"));
}

#[test]
fn multiple_of_is_exact_for_decimals() {
    let v = Validator::new(&json!({"multipleOf": 0.01})).unwrap();
    for (x, ok) in [(json!(0.07), true), (json!(19.99), true), (json!(1), true), (json!(0.015), false)] {
        assert_eq!(v.is_valid(&x), ok, "{x}");
    }
}

#[test]
fn unique_items_on_a_long_array_costs_its_length() {
    // 200,000 distinct numbers and objects (equal only by value: 1 and 1.0, keys in any order):
    // pairwise comparison would be 2e10 steps; bucketed, it is instant.
    let v = Validator::new(&json!({"uniqueItems": true})).unwrap();
    let mut items: Vec<Value> = (0..100_000).map(|i| json!(i)).collect();
    items.extend((0..100_000).map(|i| json!({"a": i, "b": [i]})));
    assert!(v.is_valid(&Value::Array(items.clone())));
    items.push(json!({"b": [7.0], "a": 7}));
    assert!(!v.is_valid(&Value::Array(items.clone())));
    items.pop();
    items.push(json!(99_999.0));
    assert!(!v.is_valid(&Value::Array(items)));
}
