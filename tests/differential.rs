//! Differential tests of mcpspec's hand-written evaluators against the libraries they stand
//! in for, on generated input (a seeded generator: a failure prints the seed and the case;
//! `MCPSPEC_DIFF_SEED` replays one, `MCPSPEC_DIFF_CASES` runs more):
//! - the direct walk of simple JSONPaths (`ground::json::path`) against `serde_json_path`,
//!   on paths near the walk's grammar (names, quoted names, indexes, and near misses) and
//!   documents made of the names those paths use;
//! - the YAML reader (`ground::yaml`) against serde-saphyr, on documents written in every
//!   layout a person uses (block and flow collections, plain, quoted and block scalars,
//!   comments), restricted to what YAML 1.1 and 1.2 read alike, and against the value each
//!   document was written from.

use serde_json::{Map, Value, json};

/// xorshift64*: small, seeded, the same sequence on every machine.
struct Gen(u64);

impl Gen {
    fn new(seed: u64) -> Self {
        Gen(seed.max(1))
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Run `case` for each seed from a fixed start (or the one `MCPSPEC_DIFF_SEED` names).
fn for_seeds(default_cases: u64, mut case: impl FnMut(u64) -> Result<(), String>) {
    let (first, count) = match std::env::var("MCPSPEC_DIFF_SEED") {
        Ok(seed) => (seed.parse().expect("MCPSPEC_DIFF_SEED is a number"), 1),
        Err(_) => (1, env_number("MCPSPEC_DIFF_CASES", default_cases)),
    };
    for seed in first..first + count {
        if let Err(e) = case(seed) {
            panic!("seed {seed} (replay: MCPSPEC_DIFF_SEED={seed}): {e}");
        }
    }
}

// ---- JSONPath ----------------------------------------------------------------------------

/// Member names the documents hold and the paths ask for: shorthand-able ones, ones that
/// need brackets, and ones with characters a quoted name must escape.
const NAMES: [&str; 14] = [
    "a",
    "b",
    "content",
    "_x1",
    "é",
    "a-b",
    "0",
    "",
    " sp",
    "it's",
    "q\"d",
    "back\\slash",
    "tab\tin",
    "ünï",
];

fn document(g: &mut Gen, depth: usize) -> Value {
    match g.below(if depth == 0 { 4 } else { 6 }) {
        0 => json!(null),
        1 => json!(g.below(100)),
        2 => json!(*g.pick(&NAMES)),
        3 => json!(g.chance(50)),
        4 => Value::Array((0..g.below(5)).map(|_| document(g, depth - 1)).collect()),
        _ => Value::Object(
            (0..g.below(5))
                .map(|_| (g.pick(&NAMES).to_string(), document(g, depth - 1)))
                .collect::<Map<_, _>>(),
        ),
    }
}

/// What a selector means to select, when it is a name or an index: documents are built
/// along it so that paths find something as often as they miss.
enum Aim {
    Name(&'static str),
    Index(i64),
}

/// One selector, mostly of the walk's grammar (with its aim), sometimes a near miss the
/// library parses differently or refuses (wildcards, slices, escapes, leading zeros, spaces).
fn selector(g: &mut Gen) -> (String, Option<Aim>) {
    let name = *g.pick(&NAMES);
    let aimed = |text: String| (text, Some(Aim::Name(name)));
    match g.below(12) {
        0..=2 => aimed(format!(".{name}")),
        3 => aimed(format!(
            "['{}']",
            name.replace('\\', "\\\\").replace('\'', "\\'")
        )),
        4 => aimed(format!(
            "[\"{}\"]",
            name.replace('\\', "\\\\").replace('"', "\\\"")
        )),
        5 => aimed(format!("['{name}']")),
        6..=8 => {
            let i = g.below(5) as i64 - 2;
            (format!("[{i}]"), Some(Aim::Index(i)))
        }
        9 => (
            g.pick(&[
                "[*]", ".*", "[0:2]", "[-0]", "[01]", "[ 0 ]", "..a", "[0,1]",
            ])
            .to_string(),
            None,
        ),
        10 => (
            format!(
                "[{}]",
                g.pick(&["9007199254740992", "-9007199254740991", "1e2"])
            ),
            None,
        ),
        _ => (
            g.pick(&[".1a", ".a1", "['\\u0041']", "[\"\\t\"]", "."])
                .to_string(),
            None,
        ),
    }
}

/// A document in which the aims lead somewhere (most of the time: a sibling may take the
/// place, an array may be too short), random past them.
fn document_along(g: &mut Gen, aims: &[Option<Aim>]) -> Value {
    let Some((first, rest)) = aims.split_first() else {
        return document(g, 3);
    };
    match first {
        Some(Aim::Name(name)) if !g.chance(10) => {
            let mut map = match document(g, 1) {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            map.insert(name.to_string(), document_along(g, rest));
            Value::Object(map)
        }
        Some(Aim::Index(i)) if !g.chance(10) => {
            // Long enough for the index most of the time, one short of it sometimes.
            let needed = if *i >= 0 {
                *i as usize + 1
            } else {
                i.unsigned_abs() as usize
            };
            let len = if g.chance(75) {
                needed + g.below(2)
            } else {
                g.below(needed)
            };
            Value::Array((0..len).map(|_| document_along(g, rest)).collect())
        }
        _ => document(g, 4),
    }
}

#[test]
fn the_direct_walk_agrees_with_serde_json_path_on_generated_paths() {
    use mcpspec::ground::json::path::CompiledPath;
    use serde_json_path::JsonPath;
    let (mut compared, mut found) = (0, 0);
    for_seeds(3000, |seed| {
        let mut g = Gen::new(seed);
        let (texts, aims): (Vec<String>, Vec<Option<Aim>>) =
            (0..g.below(5)).map(|_| selector(&mut g)).unzip();
        let path = format!("${}", texts.concat());
        let ours = CompiledPath::parse(&path);
        let library = JsonPath::parse(&path);
        match (&ours, &library) {
            (Ok(_), Ok(_)) => {}
            (Err(_), Err(_)) => return Ok(()),
            _ => {
                return Err(format!(
                    "{path:?}: parsed by one only: mcpspec {:?}, library {:?}",
                    ours.as_ref().err(),
                    library.as_ref().err().map(|e| e.to_string())
                ));
            }
        }
        let (ours, library) = (ours.unwrap(), library.unwrap());
        for _ in 0..8 {
            let doc = if g.chance(70) {
                document_along(&mut g, &aims)
            } else {
                document(&mut g, 4)
            };
            let want = library.query(&doc).all();
            let got = ours.query(&doc);
            if got.as_slice() != want.as_slice() {
                return Err(format!(
                    "{path:?} on {doc}: mcpspec {:?}, library {want:?}",
                    got.as_slice()
                ));
            }
            compared += 1;
            found += usize::from(!want.is_empty());
        }
        Ok(())
    });
    // The generator is not so far off the grammar that little is compared, and its paths
    // find something often enough to tell a wrong find from a right one.
    assert!(
        compared > 10_000,
        "{compared} comparisons, {found} with a match"
    );
    assert!(
        found > compared / 4,
        "{compared} comparisons, {found} with a match"
    );
}

// ---- YAML --------------------------------------------------------------------------------

/// Plain-scalar words that YAML 1.1 and 1.2 read alike as strings (no yes/no/on/off, no
/// sexagesimal or octal look-alikes); every other string is written quoted.
const WORDS: [&str; 8] = [
    "alpha",
    "beta gamma",
    "x_y",
    "tools/call",
    "é",
    "a-b",
    "v2",
    "camelCase",
];
const KEYS: [&str; 8] = ["name", "a", "b", "with space", "é", "x1", "kebab-key", "n"];

/// A value the YAML can be written from (numbers both readers read alike: integers and
/// floats with a fraction and no exponent).
fn yaml_value(g: &mut Gen, depth: usize) -> Value {
    match g.below(if depth == 0 { 6 } else { 8 }) {
        0 => json!(null),
        1 => json!(g.chance(50)),
        2 => json!(g.below(2000) as i64 - 1000),
        3 => json!((g.below(2000) as f64 - 1000.0) / 8.0 + 0.125),
        4 => json!(*g.pick(&WORDS)),
        5 => json!(*g.pick(&[
            "yes",
            "No",
            "on",
            "OFF",
            "y",
            "n",
            "true",
            "null",
            "~",
            "010",
            "1:20",
            "0o17",
            "1_000",
            "",
            " lead",
            "a: b",
            "it's",
            "say \"hi\"",
            "line\nbreak",
            "tab\there",
            "# not a comment",
            "- dash",
            "[x]",
            "{y}",
            "back\\slash",
            "trail ",
        ])),
        6 => Value::Array((0..g.below(4)).map(|_| yaml_value(g, depth - 1)).collect()),
        _ => Value::Object(
            (0..g.below(4))
                .map(|_| (g.pick(&KEYS).to_string(), yaml_value(g, depth - 1)))
                .collect::<Map<_, _>>(),
        ),
    }
}

fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A string scalar in a form chosen at random among those that keep its value.
fn string_scalar(g: &mut Gen, s: &str, in_flow: bool) -> String {
    let plain_ok = WORDS.contains(&s) && !(in_flow && s.contains(['[', ']', '{', '}', ',']));
    let single_ok = !s.contains(['\n', '\t']);
    match g.below(3) {
        0 if plain_ok => s.to_string(),
        1 if single_ok => format!("'{}'", s.replace('\'', "''")),
        _ => double_quoted(s),
    }
}

fn key(g: &mut Gen, k: &str) -> String {
    if !k.contains(' ') && g.chance(70) {
        k.to_string()
    } else {
        string_scalar(g, k, true)
    }
}

fn scalar(g: &mut Gen, v: &Value, in_flow: bool) -> String {
    match v {
        Value::Null => g.pick(&["null", "~", "Null"]).to_string(),
        Value::Bool(b) => {
            let forms: [&str; 2] = if *b {
                ["true", "True"]
            } else {
                ["false", "False"]
            };
            g.pick(&forms).to_string()
        }
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => format!("{f:?}"),
            _ => n.to_string(),
        },
        Value::String(s) => string_scalar(g, s, in_flow),
        _ => unreachable!(),
    }
}

fn flow(g: &mut Gen, v: &Value) -> String {
    match v {
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| flow(g, i))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", key(g, k), flow(g, v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => scalar(g, other, true),
    }
}

/// `v` after `after` (its key or dash): on the same line when a scalar or flow collection,
/// else on the lines below, its entries indented by `indent`.
fn block(g: &mut Gen, v: &Value, indent: usize, out: &mut String, after: &str) {
    let pad = " ".repeat(indent);
    let comment = if g.chance(15) { "  # note" } else { "" };
    match v {
        Value::Array(items) if !items.is_empty() && !g.chance(20) => {
            out.push_str(after.trim_end());
            out.push_str(comment);
            out.push('\n');
            for item in items {
                block(g, item, indent + 2, out, &format!("{pad}- "));
            }
        }
        Value::Object(map) if !map.is_empty() && !g.chance(20) => {
            out.push_str(after.trim_end());
            out.push_str(comment);
            out.push('\n');
            for (k, item) in map {
                let after = format!("{pad}{}: ", key(g, k));
                block(g, item, indent + 2, out, &after);
            }
        }
        Value::String(s) if !s.ends_with('\n') && !s.is_empty() && g.chance(15) => {
            // A literal block scalar, its lines indented under the key.
            let chomp = if s.ends_with(' ') { "" } else { "-" };
            if chomp.is_empty() || s.starts_with(' ') || s.contains('\t') {
                out.push_str(&format!("{after}{}{comment}\n", double_quoted(s)));
                return;
            }
            out.push_str(&format!("{after}|{chomp}{comment}\n"));
            for line in s.split('\n') {
                out.push_str(&format!("{pad}  {line}\n"));
            }
        }
        Value::Array(_) | Value::Object(_) => {
            out.push_str(&format!("{after}{}{comment}\n", flow(g, v)));
        }
        other => out.push_str(&format!("{after}{}{comment}\n", scalar(g, other, false))),
    }
}

fn yaml_text(g: &mut Gen, v: &Value) -> String {
    let mut out = String::new();
    if g.chance(20) {
        out.push_str("# generated\n");
    }
    if g.chance(10) {
        out.push_str("---\n");
    }
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (k, item) in map {
                let after = format!("{}: ", key(g, k));
                block(g, item, 2, &mut out, &after);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                block(g, item, 2, &mut out, "- ");
            }
        }
        other => out.push_str(&format!("{}\n", flow(g, other))),
    }
    out
}

#[test]
fn the_yaml_reader_agrees_with_serde_saphyr_on_generated_documents() {
    for_seeds(3000, |seed| {
        let mut g = Gen::new(seed);
        let value = match g.below(3) {
            0 => Value::Array((0..1 + g.below(4)).map(|_| yaml_value(&mut g, 3)).collect()),
            _ => Value::Object(
                (0..1 + g.below(4))
                    .map(|_| (g.pick(&KEYS).to_string(), yaml_value(&mut g, 3)))
                    .collect(),
            ),
        };
        let text = yaml_text(&mut g, &value);
        let ours = mcpspec::ground::yaml::from_str::<Value>(&text).map_err(|e| e.to_string());
        let reference = serde_saphyr::from_str::<Value>(&text).map_err(|e| e.to_string());
        let want = value;
        if ours.as_ref().ok() != Some(&want) {
            return Err(format!(
                "{text}\n  mcpspec read {ours:?}\n  written from {want}"
            ));
        }
        if reference.as_ref().ok() != Some(&want) {
            return Err(format!(
                "{text}\n  serde-saphyr read {reference:?}\n  written from {want}"
            ));
        }
        Ok(())
    });
}
