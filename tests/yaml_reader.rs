//! mcpspec's YAML reader (`ground::yaml`: granit events → a positioned tree → typed values)
//! agrees with serde-saphyr, the reference reader: every YAML file of the repository
//! (specs, packs, examples, tests) reads to the same values both ways, and a scenario or
//! pack file reads (or fails to read) as a scenario or pack both ways.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            yaml_files(&path, out);
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

/// The scalar forms and layouts a scenario may use, and the YAML features beyond them
/// (anchors, merge keys, tags, block scalars, radix numbers), both ways.
#[test]
fn scalar_forms_and_yaml_features_agree() {
    let cases = [
        "a: 42\nb: -7\nc: 1.25\nd: 1e3\ne: 0127\nf: ~\ng:\nh: \"null\"\ni: 2026-07-28\n",
        "yes11: yes\nno11: No\non: on\nt: True\nf: FALSE\n",
        "hex: 0x1F\noct: 0o17\nplus: +5\ninf: .inf\nninf: -.Inf\nfl: .5\nfl2: 5.\n",
        "big: 18446744073709551615\nneg: -9223372036854775808\n",
        "multi: first\n  second line\nliteral: |\n  line one\n    indented\nfolded: >\n  a\n  b\n",
        "keep: |+\n  x\n\nstrip: |-\n  y\n",
        "list: [1, two, 3.5, true, null]\nnested: {a: {b: [x, {c: d}]}}\n",
        "base: &b {x: 1, y: 2}\nuse: *b\nmerged:\n  <<: *b\n  y: 3\n",
        "a: &a [1, 2]\nb: [*a, *a]\n",
        "many:\n  <<: [{p: 1}, {p: 2, q: 2}]\n  r: 3\n",
        "s: !!str 123\nt: !!str true\nu: '123'\nv: \"1.5\"\n",
        "- x\n- - y\n  - z\n- {k: v}\n",
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
