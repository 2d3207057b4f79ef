//! House rules on the shape of the source, checked from its text (issue #43): no production
//! file grows past [`MAX_PRODUCTION_LINES`]: a file that large holds several
//! responsibilities; split it by concept rather than raise the bound. And no production code
//! imports by glob (`use super::*`, `pub use child::*`): a file says what it takes and from
//! where; nor re-exports what another module defines (`pub use crate::…`, `pub use super::…`:
//! a shim, kept so old paths keep working): its callers name the real path. A module's
//! re-exports of its own children, by name, are its public face and stay. And the shipped
//! crates' `unsafe` code is exactly what [`UNSAFE_ALLOWED`] lists, each with its reason.

use std::path::{Path, PathBuf};

/// The most lines a file of production code may have.
const MAX_PRODUCTION_LINES: usize = 600;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `src/` folder of every workspace member (`.` included), from the root `Cargo.toml`.
fn source_folders() -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let members = manifest
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .expect("a [workspace] members list in Cargo.toml")
        .0;
    let folders: Vec<PathBuf> = members
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| root().join(m).join("src"))
        .collect();
    for folder in &folders {
        assert!(folder.is_dir(), "{} is not a folder", folder.display());
    }
    folders
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `.rs` file of every workspace member's `src/`: its path from the root, its text.
fn source_texts() -> Vec<(String, String)> {
    let mut files = Vec::new();
    for folder in source_folders() {
        rust_files(&folder, &mut files);
    }
    files
        .iter()
        .map(|file| {
            let name = file
                .strip_prefix(root())
                .unwrap_or(file)
                .display()
                .to_string();
            (
                name,
                std::fs::read_to_string(file).expect("readable source"),
            )
        })
        .collect()
}

/// The lines of a file before its unit-test module (`#[cfg(test)]` then `mod tests`); the
/// whole file when it has none (tests in a `tests.rs` beside it are a file of their own).
fn production_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .windows(2)
        .position(|pair| {
            pair[0].trim() == "#[cfg(test)]" && {
                let next = pair[1].trim_start();
                let next = next
                    .strip_prefix("pub(crate) ")
                    .or_else(|| next.strip_prefix("pub(super) "))
                    .or_else(|| next.strip_prefix("pub "))
                    .unwrap_or(next);
                next.starts_with("mod tests")
            }
        })
        .unwrap_or(lines.len())
}

#[test]
fn production_lines_counts_up_to_the_test_module() {
    assert_eq!(production_lines("a\nb\n"), 2);
    assert_eq!(
        production_lines("a\nb\n#[cfg(test)]\nmod tests {\n x\n}\n"),
        2
    );
    assert_eq!(production_lines("a\n#[cfg(test)]\nmod tests;\n"), 1);
    assert_eq!(production_lines("a\n#[cfg(test)]\nfn helper() {}\n"), 3);
}

#[test]
fn no_production_file_passes_600_lines() {
    let mut over: Vec<(usize, String)> = source_texts()
        .into_iter()
        .filter_map(|(name, text)| {
            let count = production_lines(&text);
            (count > MAX_PRODUCTION_LINES).then_some((count, name))
        })
        .collect();
    over.sort_by(|a, b| b.cmp(a));
    assert!(
        over.is_empty(),
        "{} files have more than {MAX_PRODUCTION_LINES} production lines (lines before \
         `#[cfg(test)] mod tests`); split each by responsibility:\n{}",
        over.len(),
        over.iter()
            .map(|(count, name)| format!("{count:>6} {name}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The visibility a line starts with (`pub`, `pub(crate)`, `pub(in …)`, …) and the rest;
/// `None` for a private item.
fn public(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("pub")?;
    if let Some(rest) = rest.strip_prefix(' ') {
        return Some(rest);
    }
    let (_, rest) = rest.strip_prefix('(')?.split_once(')')?;
    rest.strip_prefix(' ')
}

/// The production `use` statements of `text` (before its test module) that break the house
/// rule, as (line, why): a glob import at the top level of the file (a `use Enum::*;` inside
/// a function body is indented, and stays), or a public one anywhere; a re-export whose path
/// starts outside the module (`crate::`, `super::`): a shim.
fn use_faults(text: &str) -> Vec<(usize, &'static str)> {
    let lines: Vec<&str> = text.lines().take(production_lines(text)).collect();
    let mut out = Vec::new();
    let mut n = 0;
    while n < lines.len() {
        let start = n;
        let line = lines[n];
        let trimmed = line.trim_start();
        let exported = public(trimmed);
        let Some(path) = exported.unwrap_or(trimmed).strip_prefix("use ") else {
            n += 1;
            continue;
        };
        // The whole statement, up to its `;` (a group may span lines).
        let mut statement = path.to_string();
        while !statement.contains(';') && n + 1 < lines.len() {
            n += 1;
            statement.push_str(lines[n].trim());
        }
        n += 1;
        let top_level = trimmed.len() == line.len();
        if statement.contains('*') && (top_level || exported.is_some()) {
            out.push((start + 1, "imports by glob"));
        }
        if exported.is_some() && (path.starts_with("crate::") || path.starts_with("super::")) {
            out.push((start + 1, "re-exports from outside the module"));
        }
    }
    out
}

#[test]
fn use_faults_are_globs_and_shims_before_the_test_module() {
    let text = "use a::b;\n\
                use super::*;\n\
                pub use child::*;\n\
                pub use child::{A, b};\n\
                pub(crate) use crate::x::Y;\n\
                pub(super) use super::{\n    z::Z,\n    w::*,\n};\n\
                fn f() {\n    use E::*;\n}\n\
                pub use_: u8,\n\
                #[cfg(test)]\nmod tests {\n    use super::*;\n}\n";
    assert_eq!(
        use_faults(text),
        vec![
            (2, "imports by glob"),
            (3, "imports by glob"),
            (5, "re-exports from outside the module"),
            (6, "imports by glob"),
            (6, "re-exports from outside the module"),
        ]
    );
}

/// Checked in every workspace member's `src/` (mcpspec's and the example servers').
#[test]
fn no_production_file_imports_by_glob_or_re_exports_from_elsewhere() {
    let mut faults: Vec<String> = source_texts()
        .into_iter()
        .flat_map(|(name, text)| {
            use_faults(&text)
                .into_iter()
                .map(move |(line, why)| format!("{name}:{line}: {why}"))
                .collect::<Vec<_>>()
        })
        .collect();
    faults.sort();
    assert!(
        faults.is_empty(),
        "{} production imports break the house rule: import the items a file uses by name, \
         from the module that defines them (a module may re-export its own children by name: \
         its public face):\n{}",
        faults.len(),
        faults.join("\n")
    );
}

/// The `unsafe` code of the shipped crates, each with why it cannot be safe: (file, how
/// many, why). A new `unsafe` fails here until it is listed with its reason (and it must sit in
/// `ground::platform`: Cargo.toml's `[lints]` denies `unsafe_code` everywhere else).
const UNSAFE_ALLOWED: &[(&str, usize, &str)] = &[
    (
        "src/ground/platform/linux.rs",
        1,
        "the child's one pre_exec (BeforeExec): std's pre_exec is unsafe, and rustix has no mount_setattr",
    ),
    (
        "src/ground/platform/unix.rs",
        1,
        "getrusage: rustix has none, and the user/system split `load` reports needs it",
    ),
];

/// The places a text opens `unsafe` code (a block, fn, impl or trait), comments aside.
fn unsafe_openings(text: &str) -> usize {
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .map(|code| {
            [
                "unsafe {",
                "unsafe fn",
                "unsafe impl",
                "unsafe trait",
                "unsafe extern",
            ]
            .iter()
            .map(|opening| code.matches(opening).count())
            .sum::<usize>()
        })
        .sum()
}

#[test]
fn unsafe_openings_are_counted_in_code_only() {
    assert_eq!(
        unsafe_openings("let x = unsafe { f() };\n// unsafe { no }\n"),
        1
    );
    assert_eq!(
        unsafe_openings("unsafe fn a() {}\nunsafe impl Send for A {}\n"),
        2
    );
    assert_eq!(unsafe_openings("let unsafe_char = 1;\n"), 0);
}

/// Every workspace member's `src/` (unit tests included). Integration tests and benches
/// may reach for the system directly (a counting allocator, `wait4` with its usage):
/// they ship to nobody.
#[test]
fn unsafe_code_is_only_where_it_is_listed() {
    let mut found: Vec<(String, usize)> = source_texts()
        .into_iter()
        .filter_map(|(name, text)| {
            let count = unsafe_openings(&text);
            (count > 0).then_some((name, count))
        })
        .collect();
    found.sort();
    let allowed: Vec<(String, usize)> = UNSAFE_ALLOWED
        .iter()
        .map(|(file, count, _)| (file.to_string(), *count))
        .collect();
    assert_eq!(
        found, allowed,
        "the workspace's unsafe code is not what UNSAFE_ALLOWED lists (file, count): make it \
         safe, or list it there with the reason it cannot be"
    );
}
