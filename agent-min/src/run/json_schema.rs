//! A JSON Schema validator for `--output-schema`: every assertion of drafts 4 to 2020-12 over
//! one schema file, `$ref`s being JSON pointers inside it.
//!
//! What it does not implement it refuses when the schema is loaded, naming the keyword, so a
//! result is never passed off as checked: `unevaluatedProperties` / `unevaluatedItems`, dynamic
//! and recursive references, `$anchor`s, a nested `$id`, a `$ref` to another document, and a
//! `pattern` the regex crate cannot compile (look-around, back-references). `format` is an
//! annotation, as 2020-12 says by default; `pattern`s are the regex crate's syntax (`\d` is any
//! Unicode digit, ECMA-262's only ASCII ones). Numbers are `serde_json`'s (64-bit); `multipleOf`
//! is exact for decimals. Unknown keywords are ignored, as the specification says.

use std::cmp::Ordering;
use std::collections::HashMap;

use regex::Regex;
use serde_json::{Map, Number, Value};

/// How deep schemas may nest through `$ref`s and applicators while checking one value: a
/// `{"$ref": "#"}` loop ends here as an error instead of exhausting the stack.
const MAX_DEPTH: usize = 256;
/// Most bytes of a compiled `pattern`.
const PATTERN_SIZE: usize = 1 << 20;
/// Most characters of a value quoted in an error.
const SHOWN: usize = 120;

/// A checked schema: the document, its compiled patterns, and whether `$ref` hides its siblings
/// (drafts 4 to 7).
pub(crate) struct Validator {
    root: Value,
    patterns: HashMap<String, Regex>,
    ref_alone: bool,
}

/// The keywords refused, with why.
const UNSUPPORTED: [&str; 8] = [
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$anchor",
    "$vocabulary",
];

/// The keywords whose value is one schema.
const ONE: [&str; 9] =
    ["additionalProperties", "additionalItems", "contains", "propertyNames", "if", "then", "else", "not", "items"];
/// The keywords whose value is an array of schemas.
const LIST: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
/// The keywords whose value is an object of schemas.
const NAMED: [&str; 5] = ["properties", "patternProperties", "dependentSchemas", "$defs", "definitions"];
/// The type names.
const TYPES: [&str; 7] = ["null", "boolean", "object", "array", "number", "string", "integer"];

impl Validator {
    /// Checks that `schema` is a schema this validator implements whole, and compiles its
    /// patterns; the error names the keyword and where it is.
    pub(crate) fn new(schema: &Value) -> Result<Validator, String> {
        let draft = schema.get("$schema").and_then(Value::as_str).unwrap_or("");
        let ref_alone = ["draft-04", "draft-06", "draft-07"].iter().any(|d| draft.contains(d));
        let mut v = Validator { root: schema.clone(), patterns: HashMap::new(), ref_alone };
        v.learn(schema, "#", true)?;
        Ok(v)
    }

    /// At most `max` errors of `value`, each with where it is (a JSON pointer) when not the top.
    pub(crate) fn errors(&self, value: &Value, max: usize) -> Vec<String> {
        let mut errs = Errors { list: Vec::new(), max };
        self.check(&self.root, value, &mut String::new(), Some(&mut errs), 0);
        errs.list
    }

    /// Whether `value` is valid.
    #[cfg(test)]
    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        self.check(&self.root, value, &mut String::new(), None, 0)
    }

    /// Walks one schema at `at` (for errors): its keywords' forms, its references, its patterns.
    fn learn(&mut self, s: &Value, at: &str, top: bool) -> Result<(), String> {
        let o = match s {
            Value::Bool(_) => return Ok(()),
            Value::Object(o) => o,
            _ => return Err(format!("{at}: a schema must be an object or a boolean")),
        };
        for (k, v) in o {
            let here = format!("{at}/{}", escape(k));
            if UNSUPPORTED.contains(&k.as_str()) {
                return Err(format!("{here}: `{k}` is not supported by this validator"));
            }
            match k.as_str() {
                "$id" if !top => return Err(format!("{here}: a nested `$id` is not supported")),
                "$ref" => {
                    let r = v.as_str().ok_or_else(|| format!("{here}: `$ref` must be a string"))?;
                    if self.resolve(r).is_none() {
                        return Err(format!("{here}: `$ref` \"{r}\" does not point into this file"));
                    }
                }
                "type" => {
                    let ok = |t: &Value| t.as_str().is_some_and(|t| TYPES.contains(&t));
                    let fine = match v {
                        Value::Array(a) => a.iter().all(ok),
                        t => ok(t),
                    };
                    if !fine {
                        return Err(format!("{here}: {} is not a type (one of {})", shown(v), TYPES.join(", ")));
                    }
                }
                "pattern" => {
                    let p = v.as_str().ok_or_else(|| format!("{here}: `pattern` must be a string"))?;
                    self.compile(p, &here)?;
                }
                "required" if !v.as_array().is_some_and(|a| a.iter().all(Value::is_string)) => {
                    return Err(format!("{here}: `required` must be an array of strings"));
                }
                "enum" if !v.is_array() => return Err(format!("{here}: `enum` must be an array")),
                "multipleOf" if !v.as_f64().is_some_and(|m| m > 0.0) => {
                    return Err(format!("{here}: `multipleOf` must be a number above 0"));
                }
                "maximum" | "minimum" if !v.is_number() => return Err(format!("{here}: `{k}` must be a number")),
                "exclusiveMaximum" | "exclusiveMinimum" if !v.is_number() && !v.is_boolean() => {
                    return Err(format!("{here}: `{k}` must be a number"));
                }
                "maxLength" | "minLength" | "maxItems" | "minItems" | "maxProperties" | "minProperties"
                | "maxContains" | "minContains"
                    if v.as_u64().is_none() && !v.as_f64().is_some_and(|f| f >= 0.0 && f.fract() == 0.0) =>
                {
                    return Err(format!("{here}: `{k}` must be a non-negative integer"));
                }
                "dependentRequired" => {
                    let ok = v.as_object().is_some_and(|o| {
                        o.values().all(|d| d.as_array().is_some_and(|a| a.iter().all(Value::is_string)))
                    });
                    if !ok {
                        return Err(format!("{here}: `dependentRequired` must map names to arrays of strings"));
                    }
                }
                "dependencies" => {
                    let o = v.as_object().ok_or_else(|| format!("{here}: `dependencies` must be an object"))?;
                    for (name, d) in o {
                        if !d.is_array() {
                            self.learn(d, &format!("{here}/{}", escape(name)), false)?;
                        }
                    }
                }
                "items" if v.is_array() => self.learn_list(v, &here)?,
                _ if ONE.contains(&k.as_str()) => self.learn(v, &here, false)?,
                _ if LIST.contains(&k.as_str()) => self.learn_list(v, &here)?,
                _ if NAMED.contains(&k.as_str()) => {
                    let o = v.as_object().ok_or_else(|| format!("{here}: `{k}` must be an object"))?;
                    for (name, sub) in o {
                        if k == "patternProperties" {
                            self.compile(name, &here)?;
                        }
                        self.learn(sub, &format!("{here}/{}", escape(name)), false)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn learn_list(&mut self, v: &Value, here: &str) -> Result<(), String> {
        let a = v.as_array().ok_or_else(|| format!("{here}: must be an array of schemas"))?;
        a.iter().enumerate().try_for_each(|(i, s)| self.learn(s, &format!("{here}/{i}"), false))
    }

    fn compile(&mut self, p: &str, here: &str) -> Result<(), String> {
        if !self.patterns.contains_key(p) {
            let re = regex::RegexBuilder::new(p)
                .size_limit(PATTERN_SIZE)
                .build()
                .map_err(|e| format!("{here}: the pattern \"{p}\" is not supported ({e})"))?;
            self.patterns.insert(p.to_string(), re);
        }
        Ok(())
    }

    /// The schema a local `$ref` names: `#` or `#/json/pointer`.
    fn resolve(&self, r: &str) -> Option<&Value> {
        let pointer = r.strip_prefix('#')?;
        let pointer = percent_decode(pointer)?;
        self.root.pointer(&pointer)
    }

    /// Whether `v` (at the pointer `at`) is valid against `s`; with `errs`, every error found
    /// is added (up to its most), else the first one ends the check.
    fn check(&self, s: &Value, v: &Value, at: &mut String, mut errs: Option<&mut Errors>, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return fail(&mut errs, at, "the schema nests too deeply (a `$ref` loop?)".to_string());
        }
        let o = match s {
            Value::Bool(true) => return true,
            Value::Bool(false) => return fail(&mut errs, at, format!("False schema does not allow {}", shown(v))),
            Value::Object(o) => o,
            _ => return true,
        };
        let mut ok = true;
        macro_rules! bad {
            ($($msg:tt)*) => {{
                ok = false;
                if !fail(&mut errs, at, format!($($msg)*)) {
                    return false;
                }
            }};
        }
        macro_rules! sub {
            ($schema:expr, $value:expr) => {
                self.check($schema, $value, at, errs.as_deref_mut(), depth + 1)
            };
        }
        if let Some(r) = o.get("$ref").and_then(Value::as_str) {
            let target = self.resolve(r).unwrap_or(&Value::Bool(true));
            if !sub!(target, v) {
                ok = false;
                if errs.is_none() {
                    return false;
                }
            }
            if self.ref_alone {
                return ok;
            }
        }
        if let Some(t) = o.get("type") {
            let names: Vec<&str> = match t {
                Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                t => t.as_str().into_iter().collect(),
            };
            if !names.iter().any(|n| is_type(v, n)) {
                let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                let what = if quoted.len() == 1 { "type" } else { "types" };
                bad!("{} is not of {what} {}", shown(v), quoted.join(", "));
            }
        }
        if let Some(Value::Array(e)) = o.get("enum") {
            if !e.iter().any(|x| same(x, v)) {
                bad!("{} is not one of {}", shown(v), shown(&Value::Array(e.clone())));
            }
        }
        if let Some(c) = o.get("const") {
            if !same(c, v) {
                bad!("{} was expected", shown(c));
            }
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            let Some(Value::Array(list)) = o.get(key) else { continue };
            match key {
                "allOf" => {
                    for s in list {
                        if !sub!(s, v) {
                            ok = false;
                            if errs.is_none() {
                                return false;
                            }
                        }
                    }
                }
                _ => {
                    let valid = list.iter().filter(|s| self.check(s, v, at, None, depth + 1)).take(2).count();
                    if valid == 0 {
                        bad!("{} is not valid under any of the schemas listed in the '{key}' keyword", shown(v));
                    } else if key == "oneOf" && valid > 1 {
                        bad!("{} is valid under more than one of the schemas listed in the 'oneOf' keyword", shown(v));
                    }
                }
            }
        }
        if let Some(n) = o.get("not") {
            if self.check(n, v, at, None, depth + 1) {
                bad!("{} should not be valid under {}", shown(v), shown(n));
            }
        }
        if let Some(i) = o.get("if") {
            let branch = if self.check(i, v, at, None, depth + 1) { o.get("then") } else { o.get("else") };
            if let Some(b) = branch {
                if !sub!(b, v) {
                    ok = false;
                    if errs.is_none() {
                        return false;
                    }
                }
            }
        }
        match v {
            Value::Number(n) => {
                let bound = |k: &str| o.get(k).and_then(|b| b.as_number());
                let flag = |k: &str| o.get(k).and_then(Value::as_bool).unwrap_or(false);
                if let Some(m) = bound("maximum") {
                    let c = cmp(n, m);
                    if c == Ordering::Greater || (flag("exclusiveMaximum") && c == Ordering::Equal) {
                        bad!("{n} is greater than {}the maximum of {m}", if c.is_eq() { "or equal to " } else { "" });
                    }
                }
                if let Some(m) = bound("minimum") {
                    let c = cmp(n, m);
                    if c == Ordering::Less || (flag("exclusiveMinimum") && c == Ordering::Equal) {
                        bad!("{n} is less than {}the minimum of {m}", if c.is_eq() { "or equal to " } else { "" });
                    }
                }
                if let Some(m) = bound("exclusiveMaximum") {
                    if cmp(n, m) != Ordering::Less {
                        bad!("{n} is greater than or equal to the maximum of {m}");
                    }
                }
                if let Some(m) = bound("exclusiveMinimum") {
                    if cmp(n, m) != Ordering::Greater {
                        bad!("{n} is less than or equal to the minimum of {m}");
                    }
                }
                if let Some(m) = bound("multipleOf") {
                    if !multiple_of(n, m) {
                        bad!("{n} is not a multiple of {m}");
                    }
                }
            }
            Value::String(text) => {
                let count = || text.chars().count() as u64;
                if let Some(max) = int(o.get("maxLength")) {
                    if count() > max {
                        bad!("{} is longer than {max} character{}", shown(v), plural(max));
                    }
                }
                if let Some(min) = int(o.get("minLength")) {
                    if count() < min {
                        bad!("{} is shorter than {min} character{}", shown(v), plural(min));
                    }
                }
                if let Some(p) = o.get("pattern").and_then(Value::as_str) {
                    if !self.patterns.get(p).is_some_and(|re| re.is_match(text)) {
                        bad!("{} does not match \"{p}\"", shown(v));
                    }
                }
            }
            Value::Array(items) => {
                let len = items.len() as u64;
                if let Some(max) = int(o.get("maxItems")) {
                    if len > max {
                        bad!("{} has more than {max} item{}", shown(v), plural(max));
                    }
                }
                if let Some(min) = int(o.get("minItems")) {
                    if len < min {
                        bad!("{} has less than {min} item{}", shown(v), plural(min));
                    }
                }
                if o.get("uniqueItems").and_then(Value::as_bool) == Some(true) && has_duplicates(items) {
                    bad!("{} has non-unique elements", shown(v));
                }
                // Positional schemas (`prefixItems`, or `items` as an array before 2020-12), then
                // the schema for the rest (`items`, or `additionalItems`).
                let (prefix, rest) = match (o.get("prefixItems"), o.get("items")) {
                    (Some(Value::Array(p)), r) => (p.as_slice(), r),
                    (_, Some(Value::Array(p))) => (p.as_slice(), o.get("additionalItems")),
                    (_, r) => (&[][..], r),
                };
                for (i, item) in items.iter().enumerate() {
                    let Some(s) = prefix.get(i).or(rest) else { break };
                    let len = at.len();
                    at.push_str(&format!("/{i}"));
                    let good = sub!(s, item);
                    at.truncate(len);
                    if !good {
                        ok = false;
                        if errs.is_none() {
                            return false;
                        }
                    }
                }
                if let Some(c) = o.get("contains") {
                    let min = int(o.get("minContains")).unwrap_or(1);
                    let found = items.iter().filter(|x| self.check(c, x, at, None, depth + 1)).count() as u64;
                    if found < min {
                        if found == 0 {
                            bad!("None of {} are valid under the given schema", shown(v));
                        } else {
                            bad!("{} contains {found} matching item{}, fewer than {min}", shown(v), plural(found));
                        }
                    }
                    if let Some(max) = int(o.get("maxContains")) {
                        if found > max {
                            bad!("{} contains {found} matching items, more than {max}", shown(v));
                        }
                    }
                }
            }
            Value::Object(props) => {
                let len = props.len() as u64;
                if let Some(max) = int(o.get("maxProperties")) {
                    if len > max {
                        bad!("{} has more than {max} propert{}", shown(v), if max == 1 { "y" } else { "ies" });
                    }
                }
                if let Some(min) = int(o.get("minProperties")) {
                    if len < min {
                        bad!("{} has less than {min} propert{}", shown(v), if min == 1 { "y" } else { "ies" });
                    }
                }
                if let Some(Value::Array(req)) = o.get("required") {
                    for name in req.iter().filter_map(Value::as_str) {
                        if !props.contains_key(name) {
                            bad!("\"{name}\" is a required property");
                        }
                    }
                }
                let mut deps: Vec<(&String, &Value)> = Vec::new();
                for key in ["dependentRequired", "dependentSchemas", "dependencies"] {
                    if let Some(Value::Object(d)) = o.get(key) {
                        deps.extend(d.iter());
                    }
                }
                for (name, dep) in deps {
                    if !props.contains_key(name) {
                        continue;
                    }
                    match dep {
                        Value::Array(needed) => {
                            for n in needed.iter().filter_map(Value::as_str) {
                                if !props.contains_key(n) {
                                    bad!("\"{n}\" is a dependency of \"{name}\"");
                                }
                            }
                        }
                        s => {
                            if !sub!(s, v) {
                                ok = false;
                                if errs.is_none() {
                                    return false;
                                }
                            }
                        }
                    }
                }
                let named = o.get("properties").and_then(Value::as_object);
                let patterned = o.get("patternProperties").and_then(Value::as_object);
                let additional = o.get("additionalProperties");
                let names = o.get("propertyNames");
                let mut unexpected = Vec::new();
                for (key, value) in props {
                    let len = at.len();
                    at.push('/');
                    at.push_str(&escape(key));
                    let mut good = true;
                    let mut matched = false;
                    if let Some(s) = named.and_then(|n| n.get(key)) {
                        matched = true;
                        good &= sub!(s, value);
                    }
                    for (p, s) in patterned.into_iter().flatten() {
                        if (good || errs.is_some()) && self.patterns.get(p).is_some_and(|re| re.is_match(key)) {
                            matched = true;
                            good &= sub!(s, value);
                        }
                    }
                    if let (false, Some(s)) = (matched, additional) {
                        if *s == Value::Bool(false) {
                            unexpected.push(format!("'{key}'"));
                        } else {
                            good &= sub!(s, value);
                        }
                    }
                    if let Some(s) = names {
                        if !self.check(s, &Value::String(key.clone()), at, None, depth + 1) {
                            good = false;
                            fail(&mut errs, at, format!("\"{key}\" is not a valid property name"));
                        }
                    }
                    at.truncate(len);
                    if !good {
                        ok = false;
                        if errs.is_none() {
                            return false;
                        }
                    }
                }
                if !unexpected.is_empty() {
                    let was = if unexpected.len() == 1 { "was" } else { "were" };
                    bad!("Additional properties are not allowed ({} {was} unexpected)", unexpected.join(", "));
                }
            }
            _ => {}
        }
        ok
    }
}

/// The errors found so far, and how many are wanted.
struct Errors {
    list: Vec<String>,
    max: usize,
}

/// Notes an error at `at`; false when the check can stop (no list, or the list is full).
fn fail(errs: &mut Option<&mut Errors>, at: &str, msg: String) -> bool {
    let Some(e) = errs.as_deref_mut() else { return false };
    if e.list.len() < e.max {
        e.list.push(if at.is_empty() { msg } else { format!("at {at}: {msg}") });
    }
    e.list.len() < e.max
}

fn is_type(v: &Value, t: &str) -> bool {
    match (t, v) {
        ("null", Value::Null) | ("boolean", Value::Bool(_)) | ("object", Value::Object(_)) => true,
        ("array", Value::Array(_)) | ("number", Value::Number(_)) | ("string", Value::String(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

/// JSON equality, numbers by value (`1` is `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => cmp(x, y) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => same_map(x, y),
        _ => a == b,
    }
}

fn same_map(x: &Map<String, Value>, y: &Map<String, Value>) -> bool {
    x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| same(a, b)))
}

/// Whether two of `items` are equal (by [`same`]). Items are bucketed by [`key`] first, so a
/// long array the model wrote costs about its length, not its square.
fn has_duplicates(items: &[Value]) -> bool {
    let mut seen: HashMap<String, Vec<&Value>> = HashMap::new();
    items.iter().any(|item| {
        let bucket = seen.entry(key(item)).or_default();
        let found = bucket.iter().any(|b| same(item, b));
        bucket.push(item);
        found
    })
}

/// A value's text with numbers as floats and object keys sorted: values equal by [`same`]
/// always have the same key (different ones rarely do, and [`same`] then decides).
fn key(v: &Value) -> String {
    match v {
        Value::Number(n) => format!("{:?}", n.as_f64().unwrap_or(f64::NAN)),
        Value::Array(a) => format!("[{}]", a.iter().map(key).collect::<Vec<_>>().join(",")),
        Value::Object(o) => {
            let mut fields: Vec<String> =
                o.iter().map(|(k, v)| format!("{}:{}", Value::from(k.as_str()), key(v))).collect();
            fields.sort_unstable();
            format!("{{{}}}", fields.join(","))
        }
        other => other.to_string(),
    }
}

/// An integer's exact value.
fn exact(n: &Number) -> Option<i128> {
    n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from))
}

/// Numbers by value: exactly between integers, else as floats.
fn cmp(a: &Number, b: &Number) -> Ordering {
    match (exact(a), exact(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => {
            let (x, y) = (a.as_f64().unwrap_or(f64::NAN), b.as_f64().unwrap_or(f64::NAN));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

/// Whether `n` is a whole multiple of `m`: exact for integers and for decimals of at most 18
/// digits after the point (`0.3` is a multiple of `0.1`), else as floats.
fn multiple_of(n: &Number, m: &Number) -> bool {
    if let (Some(x), Some(y)) = (exact(n), exact(m)) {
        return y != 0 && x % y == 0;
    }
    let (x, y) = (n.as_f64().unwrap_or(0.0), m.as_f64().unwrap_or(1.0));
    match (decimal(x), decimal(y)) {
        (Some((xm, xs)), Some((ym, ys))) if ym != 0 => {
            let scale = xs.max(ys);
            let up = |v: i128, s: u32| v.checked_mul(10i128.checked_pow(scale - s)?);
            match (up(xm, xs), up(ym, ys)) {
                (Some(a), Some(b)) => a % b == 0,
                _ => (x / y).fract() == 0.0,
            }
        }
        _ => (x / y).fract() == 0.0,
    }
}

/// A float's shortest decimal form as digits and a count of them after the point.
fn decimal(f: f64) -> Option<(i128, u32)> {
    let text = format!("{f}");
    let (int_part, frac) = text.split_once('.').unwrap_or((&text, ""));
    if frac.len() > 18 || int_part.trim_start_matches('-').len() > 18 {
        return None;
    }
    let digits: i128 = format!("{int_part}{frac}").parse().ok()?;
    Some((digits, frac.len() as u32))
}

/// A count keyword's value (`2.0` counts as `2`).
fn int(v: Option<&Value>) -> Option<u64> {
    let v = v?;
    v.as_u64().or_else(|| v.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0).map(|f| f as u64))
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A value as JSON, cut short.
fn shown(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// A name as a JSON pointer token.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// A URI fragment's percent-escapes decoded (`#/$defs/a%20b`); None when malformed.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
#[path = "json_schema_tests.rs"]
mod tests;
