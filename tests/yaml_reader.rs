//! mcpspec's YAML reader (`ground::yaml`: granit events → a positioned tree → typed values)
//! reads YAML 1.2: a committed table of tricky plain scalars and their core-schema
//! readings ([`TRICKY`]), duplicate keys judged on their values. Where YAML 1.1 and 1.2
//! agree it agrees with serde-saphyr (a YAML 1.1 reader, mcpspec's before): every YAML
//! file of the repository (specs, packs, examples, tests) reads to the same values both
//! ways — none relies on a 1.1 reading — and so do the layouts and features below.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The repository's own YAML files under `dir`: not what `scripts/test` installs beside
/// them (the interop servers' `node_modules` and venvs hold third parties' files).
fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    const INSTALLED: [&str; 2] = ["node_modules", ".venv"];
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if !path
                .file_name()
                .is_some_and(|n| INSTALLED.iter().any(|i| n == *i))
            {
                yaml_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

fn ours(text: &str) -> Result<Value, String> {
    mcpspec::ground::yaml::from_str::<Value>(text).map_err(|e| e.to_string())
}

fn reference(text: &str) -> Result<Value, String> {
    serde_saphyr::from_str::<Value>(text).map_err(|e| e.to_string())
}

#[test]
fn every_repository_yaml_file_reads_to_the_same_values_both_ways() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        "specs", "packs", "examples", "tests", "docs", ".github", "schema",
    ] {
        yaml_files(&root.join(dir), &mut files);
    }
    files.sort();
    assert!(files.len() > 100, "found only {} files", files.len());
    let mut read = 0;
    let mut differences = Vec::new();
    for file in &files {
        // Files that are not text are refused before any YAML is read.
        let Ok(text) = String::from_utf8(std::fs::read(file).unwrap()) else {
            continue;
        };
        match (ours(&text), reference(&text)) {
            (Ok(a), Ok(b)) if a == b => read += 1,
            (Err(_), Err(_)) => {}
            (a, b) => differences.push(format!(
                "{}:\n  mcpspec:      {}\n  serde-saphyr: {}",
                file.display(),
                brief(&a),
                brief(&b)
            )),
        }
    }
    // And none holds a plain value a YAML 1.1 reader reads otherwise (`validate` would
    // warn about it): every file reads as intended by both. GitHub workflows are read by
    // GitHub, whose `on:` key is a key.
    let workflow =
        |f: &Path| f.starts_with(root.join(".github")) || f.starts_with(root.join("examples/ci"));
    for file in files.iter().filter(|f| !workflow(f)) {
        let Ok(text) = String::from_utf8(std::fs::read(file).unwrap()) else {
            continue;
        };
        for note in mcpspec::ground::yaml::yaml11::yaml11_notes(&text) {
            differences.push(format!(
                "{}:{}:{}: `{}` is {} to YAML 1.1",
                file.display(),
                note.line,
                note.col,
                note.text,
                note.yaml11
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} files read differently:\n{}",
        differences.len(),
        files.len(),
        differences.join("\n")
    );
    assert!(
        read * 10 >= files.len() * 8,
        "only {read} of {} files read",
        files.len()
    );
}

fn brief(r: &Result<Value, String>) -> String {
    let s = match r {
        Ok(v) => format!("ok {v}"),
        Err(e) => format!("error {e}"),
    };
    s.chars().take(300).collect()
}

/// Tricky plain scalars and what the YAML 1.2 core schema reads them as (JSON; `ERR`:
/// refused — infinity and NaN are no JSON numbers, integers past 64 bits would lose
/// digits). A YAML 1.1 reader (serde-saphyr, PyYAML) reads many of these otherwise;
/// `validate` warns where (the last column: whether it does).
const TRICKY: &[(&str, &str, bool)] = &[
    // Booleans: only true/false in three cases.
    ("true", "true", false),
    ("True", "true", false),
    ("TRUE", "true", false),
    ("false", "false", false),
    ("False", "false", false),
    ("FALSE", "false", false),
    ("tRuE", "\"tRuE\"", true),
    ("fAlSe", "\"fAlSe\"", true),
    ("yes", "\"yes\"", true),
    ("Yes", "\"Yes\"", true),
    ("YES", "\"YES\"", true),
    ("no", "\"no\"", true),
    ("No", "\"No\"", true),
    ("NO", "\"NO\"", true),
    ("y", "\"y\"", true),
    ("Y", "\"Y\"", true),
    ("n", "\"n\"", true),
    ("N", "\"N\"", true),
    ("on", "\"on\"", true),
    ("On", "\"On\"", true),
    ("ON", "\"ON\"", true),
    ("off", "\"off\"", true),
    ("Off", "\"Off\"", true),
    ("OFF", "\"OFF\"", true),
    // Nulls.
    ("~", "null", false),
    ("null", "null", false),
    ("Null", "null", false),
    ("NULL", "null", false),
    ("", "null", false),
    ("nULL", "\"nULL\"", false),
    // Integers: decimal (leading zeros too), 0o, 0x; no sign on 0o/0x, no `_`, no 0b.
    ("0", "0", false),
    ("-0", "0", false),
    ("+12", "12", false),
    ("-12", "-12", false),
    ("0127", "127", true),
    ("01", "1", true),
    ("08", "8", true),
    ("-017", "-17", true),
    ("0o17", "15", false),
    ("0o8", "\"0o8\"", false),
    ("0O17", "\"0O17\"", true),
    ("0x1F", "31", false),
    ("0xff", "255", false),
    ("0X1F", "\"0X1F\"", true),
    ("-0x1F", "\"-0x1F\"", true),
    ("0xG", "\"0xG\"", false),
    ("0b101", "\"0b101\"", true),
    ("1_000", "\"1_000\"", true),
    ("1__0", "\"1__0\"", true),
    ("0x_1F", "\"0x_1F\"", true),
    ("1:20", "\"1:20\"", true),
    ("190:20:30", "\"190:20:30\"", true),
    ("9223372036854775807", "9223372036854775807", false),
    ("-9223372036854775808", "-9223372036854775808", false),
    ("18446744073709551615", "18446744073709551615", false),
    ("18446744073709551616", "ERR", false),
    ("-9223372036854775809", "ERR", false),
    ("99999999999999999999999", "ERR", false),
    // Floats.
    ("1.5", "1.5", false),
    ("-1.5", "-1.5", false),
    (".5", "0.5", false),
    ("5.", "5.0", false),
    ("1e3", "1000.0", false),
    ("1E3", "1000.0", false),
    ("1e+3", "1000.0", false),
    ("1.5e-3", "0.0015", false),
    ("+1.5", "1.5", false),
    ("1_000.5", "\"1_000.5\"", true),
    ("1e", "\"1e\"", false),
    ("e3", "\"e3\"", false),
    (".", "\".\"", false),
    ("1.2.3", "\"1.2.3\"", false),
    ("1e400", "ERR", false),
    (".inf", "ERR", false),
    ("-.Inf", "ERR", false),
    ("+.INF", "ERR", false),
    (".nan", "ERR", false),
    (".NaN", "ERR", false),
    (".NAN", "ERR", false),
    (".Nan", "\".Nan\"", false),
    ("inf", "\"inf\"", false),
    ("nan", "\"nan\"", false),
    // Timestamps and versions are text.
    ("2026-07-28", "\"2026-07-28\"", false),
    ("2026-07-28T10:00:00Z", "\"2026-07-28T10:00:00Z\"", false),
    ("1.2.0", "\"1.2.0\"", false),
    ("v1", "\"v1\"", false),
];

/// Each tricky value reads as YAML 1.2 reads it, and `validate`'s YAML 1.1 note is given
/// exactly where a 1.1 reader differs.
#[test]
fn tricky_values_read_as_yaml_1_2_reads_them() {
    assert!(TRICKY.len() >= 84, "{} values", TRICKY.len());
    let mut wrong = Vec::new();
    for &(text, want, differs_in_1_1) in TRICKY {
        let got = match ours(&format!("v: {text}\n")) {
            Ok(v) => v["v"].to_string(),
            Err(_) => "ERR".to_string(),
        };
        if got != want {
            wrong.push(format!("{text:?}: read {got}, YAML 1.2 reads {want}"));
        }
        let noted = mcpspec::ground::yaml::schema::yaml11_reading(text).is_some();
        if noted != differs_in_1_1 {
            wrong.push(format!(
                "{text:?}: YAML 1.1 note {noted}, want {differs_in_1_1}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Duplicate keys are judged on what they are: `~` and `null` are one key, `1` and `01`
/// one integer key; `"1"` is text, another key.
#[test]
fn duplicate_keys_are_judged_on_their_values() {
    for text in [
        "~: a\nnull: b\n",
        "1: a\n01: b\n",
        "0x10: a\n16: b\n",
        "true: a\nTrue: b\n",
        "1.0: a\n1.00: b\n",
    ] {
        let e = ours(text).expect_err(text);
        assert!(e.contains("duplicate"), "{text:?}: {e}");
    }
    for text in [
        "1: a\n\"1\": b\n",
        "yes: a\ntrue: b\n",
        "null: a\n\"null\": b\n",
    ] {
        assert!(
            mcpspec::ground::yaml::tree::read(text).is_ok(),
            "{text:?}: two keys"
        );
    }
}

/// The scalar forms and layouts a scenario may use, and the YAML features beyond them
/// (anchors, merge keys, tags, block scalars, radix numbers), both ways.
#[test]
fn scalar_forms_and_yaml_features_agree() {
    let cases = [
        "a: 42\nb: -7\nc: 1.25\nd: 1e3\nf: ~\ng:\nh: \"null\"\ni: 2026-07-28\n",
        "t: True\nf: FALSE\n",
        "hex: 0x1F\noct: 0o17\nplus: +5\ninf: .inf\nninf: -.Inf\nfl: .5\nfl2: 5.\n",
        "big: 18446744073709551615\nneg: -9223372036854775808\n",
        "multi: first\n  second line\nliteral: |\n  line one\n    indented\nfolded: >\n  a\n  b\n",
        "keep: |+\n  x\n\nstrip: |-\n  y\n",
        "list: [1, two, 3.5, true, null]\nnested: {a: {b: [x, {c: d}]}}\n",
        "base: &b {x: 1, y: 2}\nuse: *b\nmerged:\n  <<: *b\n  y: 3\n",
        "a: &a [1, 2]\nb: [*a, *a]\n",
        "many:\n  <<: [{p: 1}, {p: 2, q: 2}]\n  r: 3\n",
        "s: !!str 123\nt: !!str true\nu: '123'\nv: \"1.5\"\n",
        "- x\n- - w\n  - z\n- {k: v}\n",
        "? complex\n: value\n",
        "quoted: \"a\\tb\\u00e9\\n\"\nsingle: 'it''s'\n",
        "empty_list: []\nempty_map: {}\n",
        "---\nafter: marker\n...\n",
        "# only a comment\nk: v # trailing\n",
        "url: http://x.y/z?a=b#c\ncolon: a:b\n",
    ];
    let differences: Vec<String> = cases
        .iter()
        .filter(|text| ours(text).ok() != reference(text).ok())
        .map(|text| {
            format!(
                "{text:?}\n  mcpspec:      {}\n  serde-saphyr: {}",
                brief(&ours(text)),
                brief(&reference(text))
            )
        })
        .collect();
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
