//! Built-in packs, embedded from `specs/` at build time and resolved by name.

include!(concat!(env!("OUT_DIR"), "/builtin_packs.rs"));

/// Names that stand for several packs.
const ALIASES: &[(&str, &[&str])] = &[(
    "conformance",
    &["conformance-2026-07-28", "conformance-2025-11-25"],
)];

/// Every built-in pack name (folder under `specs/`), sorted.
pub fn pack_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = BUILTIN_FILES
        .iter()
        .filter_map(|(p, _)| p.split_once('/').map(|(pack, _)| pack))
        .collect();
    names.dedup();
    names
}

/// The packs a name resolves to (an alias, or one pack), if it is built in.
pub fn resolve(name: &str) -> Option<Vec<&'static str>> {
    if let Some((_, packs)) = ALIASES.iter().find(|(a, _)| *a == name) {
        return Some(packs.to_vec());
    }
    pack_names()
        .into_iter()
        .find(|p| *p == name)
        .map(|p| vec![p])
}

/// Aliases with what they stand for.
pub fn aliases() -> &'static [(&'static str, &'static [&'static str])] {
    ALIASES
}

/// The files of one pack: (path under `specs/`, contents), sorted.
pub fn pack_files(pack: &str) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
    BUILTIN_FILES
        .iter()
        .filter(move |(p, _)| p.split_once('/').is_some_and(|(name, _)| name == pack))
        .filter(|(p, _)| !p.ends_with("/pack.yaml"))
        .copied()
}

/// The manifest (`pack.yaml`) of a built-in pack.
pub fn manifest(pack: &str) -> Option<&'static str> {
    let path = format!("{pack}/pack.yaml");
    BUILTIN_FILES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, text)| *text)
}
