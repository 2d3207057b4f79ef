//! Reading a baseline file: the entries, their forms, and the check that each names a
//! scenario (and check) that exists.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

use super::{Baseline, ENTRY_FORMS, Entry, KEYS};
use crate::ground::load_error::did_you_mean;
use crate::ground::load_error::{LoadError, LoadErrors};
use crate::ground::source::{Pos, SourceFile};
use crate::ground::yaml;
use crate::ground::yaml::value::{At, TKind, TValue};
use crate::protocol::era::EraSelector;

impl Baseline {
    /// Read and parse a baseline file.
    pub fn load(path: &Path) -> Result<Baseline, LoadErrors> {
        Baseline::parse(crate::ground::load_error::read_source(path)?)
    }

    /// Parse and validate a baseline document, reporting every error found. An empty file
    /// (or one holding only comments) is an empty baseline.
    pub fn parse(file: Arc<SourceFile>) -> Result<Baseline, LoadErrors> {
        let mut baseline = Baseline {
            entries: Vec::new(),
            file: file.name.clone(),
        };
        if file.text.trim().is_empty() {
            return Ok(baseline);
        }
        let doc: TValue = yaml::parse(&file)?;
        let pos = |line: u32, col: u32| Pos::new(&file, line, col);
        let entries = match &doc.kind {
            TKind::Null => return Ok(baseline),
            TKind::Map(entries) => entries,
            _ => {
                return Err(LoadError::at(
                    pos(doc.line, doc.col),
                    format!(
                        "expected a mapping with `server` and `client` lists, found {}",
                        kind_name(&doc.kind)
                    ),
                )
                .with_help("write `server:` followed by one `- entry` per line")
                .into());
            }
        };
        let mut errors = LoadErrors::default();
        // Key positions (the mapping above only has the positions of values).
        let keys: Vec<At<String>> = yaml::parse::<Keys>(&file).map(|k| k.0).unwrap_or_default();
        for (index, (key, value)) in entries.iter().enumerate() {
            let key_pos = keys
                .get(index)
                .filter(|k| k.value == *key)
                .map(|k| pos(k.line, k.col))
                .unwrap_or_else(|| pos(value.line, value.col));
            match key.as_str() {
                "server" => {
                    for item in list_items(key, value, &pos, &mut errors) {
                        match item.as_str() {
                            Some(text) => {
                                let at = pos(item.line, item.col);
                                match parse_entry(text) {
                                    Ok((scenario, era, check)) => baseline.entries.push(Entry {
                                        scenario,
                                        era,
                                        check,
                                        text: text.to_string(),
                                        pos: at,
                                    }),
                                    Err((message, help)) => {
                                        errors.push(LoadError::at(at, message).with_help(help))
                                    }
                                }
                            }
                            None => errors.push(not_a_string(item, &pos)),
                        }
                    }
                }
                "client" => {
                    for item in list_items(key, value, &pos, &mut errors) {
                        if item.as_str().is_none() {
                            errors.push(not_a_string(item, &pos));
                        }
                    }
                }
                other => {
                    let list = "expected `server` (and `client`, which is ignored)";
                    let help = match did_you_mean(other, KEYS.iter().copied()) {
                        Some(s) => format!("did you mean `{s}`? {list}"),
                        None => list.to_string(),
                    };
                    errors.push(
                        LoadError::at(key_pos, format!("unknown key `{other}`")).with_help(help),
                    );
                }
            }
        }
        check_entries(&baseline.entries, &mut errors);
        if errors.is_empty() {
            Ok(baseline)
        } else {
            Err(errors)
        }
    }
}

/// The items of a `server`/`client` list (null counts as an empty list, which is what is left
/// after removing the last entry).
pub(super) fn list_items<'a>(
    key: &str,
    value: &'a TValue,
    pos: &dyn Fn(u32, u32) -> Pos,
    errors: &mut LoadErrors,
) -> &'a [TValue] {
    match &value.kind {
        TKind::Seq(items) => items,
        TKind::Null => &[],
        other => {
            errors.push(
                LoadError::at(
                    pos(value.line, value.col),
                    format!(
                        "`{key}` must be a list of strings, found {}",
                        kind_name(other)
                    ),
                )
                .with_help(format!(
                    "write one `- entry` per line under `{key}:` ({ENTRY_FORMS})"
                )),
            );
            &[]
        }
    }
}

pub(super) fn not_a_string(item: &TValue, pos: &dyn Fn(u32, u32) -> Pos) -> LoadError {
    let at = pos(item.line, item.col);
    if let TKind::Map(entries) = &item.kind {
        if let [(key, value)] = entries.as_slice() {
            let value = match &value.kind {
                TKind::Str(s) => Some(s.clone()),
                TKind::Number(n) => Some(n.to_string()),
                TKind::Bool(b) => Some(b.to_string()),
                _ => None,
            };
            if let Some(value) = value {
                return LoadError::at(
                    at,
                    format!("entry `{key}: {value}` is a mapping, not a string"),
                )
                .with_help(format!(
                    "write `{key}:{value}` with no space after the colon ({ENTRY_FORMS})"
                ));
            }
            return LoadError::at(at, format!("entry `{key}:` is a mapping, not a string"))
                .with_help(format!(
                    "write `{key}` for the whole scenario or `{key}:check` for one check, with no space after the colon"
                ));
        }
        return LoadError::at(at, "entry is a mapping, not a string")
            .with_help(format!("{ENTRY_FORMS}, with no space after the colon"));
    }
    LoadError::at(
        at,
        format!("entry must be a string, found {}", kind_name(&item.kind)),
    )
    .with_help(ENTRY_FORMS)
}

pub(super) fn kind_name(kind: &TKind) -> &'static str {
    match kind {
        TKind::Null => "nothing",
        TKind::Bool(_) => "a boolean",
        TKind::Number(_) => "a number",
        TKind::Str(_) => "a string",
        TKind::Seq(_) => "a list",
        TKind::Map(_) => "a mapping",
    }
}

pub(super) type ParsedEntry = (String, Option<String>, Option<String>);

/// Split an entry into scenario, era qualifier and check id; on error, message and help.
pub(super) fn parse_entry(text: &str) -> Result<ParsedEntry, (String, String)> {
    if text.trim().is_empty() {
        return Err(("empty entry".into(), ENTRY_FORMS.into()));
    }
    let (head, check) = match text.split_once(':') {
        Some((head, check)) => (head, Some(check)),
        None => (text, None),
    };
    if let Some(check) = check {
        if check.trim().is_empty() {
            return Err((
                format!("entry `{text}` has no check id after the colon"),
                format!(
                    "write `{}` for the whole scenario or `{}:check` for one check",
                    head.trim(),
                    head.trim()
                ),
            ));
        }
        if check.starts_with(char::is_whitespace) || head.ends_with(char::is_whitespace) {
            return Err((
                format!("entry `{text}` has a space around the colon"),
                format!(
                    "write `{}:{}` with no space after the colon",
                    head.trim(),
                    check.trim()
                ),
            ));
        }
    }
    if head != head.trim() {
        return Err((
            format!("entry `{text}` has leading or trailing spaces"),
            format!("write `{}`", text.trim()),
        ));
    }
    let (scenario, era) = match head.rsplit_once('@') {
        Some((scenario, era)) => match EraSelector::parse(era) {
            Ok(sel) => (scenario, Some(sel.label())),
            Err(e) => {
                return Err((
                    format!("invalid era qualifier in entry `{text}`"),
                    format!("the part after the last `@` of the scenario is an era: {e}"),
                ));
            }
        },
        None => (head, None),
    };
    if scenario.trim().is_empty() {
        return Err((
            format!("entry `{text}` has no scenario id"),
            ENTRY_FORMS.to_string(),
        ));
    }
    Ok((scenario.to_string(), era, check.map(str::to_string)))
}

impl Baseline {
    /// Entries that name no scenario of the selected packs and files, or no check (step)
    /// of their scenario, are errors with did-you-mean: a typo, or an id copied from
    /// another suite, would otherwise be silently ignored. `known` maps every loaded
    /// scenario id to its step names, before `--tag`, `--filter`, `--shard` and eras
    /// select what runs: an entry of a known scenario or check that does not run here is
    /// still tolerated (see the table above).
    pub fn check_known(&self, known: &BTreeMap<&str, Vec<&str>>) -> Result<(), LoadErrors> {
        let mut errors = LoadErrors::default();
        for entry in &self.entries {
            let Some(steps) = known.get(entry.scenario.as_str()) else {
                let help = match did_you_mean(&entry.scenario, known.keys().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "expected a scenario id of the files and packs run (`mcpspec list` shows them)".into(),
                };
                errors.push(
                    LoadError::at(
                        entry.pos.clone(),
                        format!(
                            "no scenario `{}` in the files and packs run",
                            entry.scenario
                        ),
                    )
                    .with_help(help),
                );
                continue;
            };
            if let Some(check) = &entry.check
                && !steps.contains(&check.as_str())
            {
                let help = match did_you_mean(check, steps.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!(
                        "checks of `{}`: {}",
                        entry.scenario,
                        steps
                            .iter()
                            .map(|s| format!("`{s}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                errors.push(
                    LoadError::at(
                        entry.pos.clone(),
                        format!("scenario `{}` has no check `{check}`", entry.scenario),
                    )
                    .with_help(help),
                );
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// Duplicates, and scenarios listed both whole and per check (same era qualifier).
pub(super) fn check_entries(entries: &[Entry], errors: &mut LoadErrors) {
    let mut seen: HashMap<(&str, Option<&str>, Option<&str>), &Entry> = HashMap::new();
    let mut whole: HashMap<(&str, Option<&str>), &Entry> = HashMap::new();
    let mut checked: HashMap<(&str, Option<&str>), &Entry> = HashMap::new();
    for entry in entries {
        let key = (
            entry.scenario.as_str(),
            entry.era.as_deref(),
            entry.check.as_deref(),
        );
        if let Some(first) = seen.get(&key) {
            errors.push(
                LoadError::at(
                    entry.pos.clone(),
                    format!("duplicate entry `{}`", entry.text),
                )
                .with_help(format!(
                    "already listed at line {} as `{}`: remove one of them",
                    first.pos.line, first.text
                )),
            );
            continue;
        }
        seen.insert(key, entry);
        let scenario_key = (entry.scenario.as_str(), entry.era.as_deref());
        let conflict = match entry.check {
            None => {
                whole.insert(scenario_key, entry);
                checked.get(&scenario_key)
            }
            Some(_) => {
                checked.entry(scenario_key).or_insert(entry);
                whole.get(&scenario_key)
            }
        };
        if let Some(other) = conflict {
            let (w, c) = if entry.check.is_none() {
                (entry, *other)
            } else {
                (*other, entry)
            };
            let scenario = match &entry.era {
                Some(era) => format!("`{}@{era}`", entry.scenario),
                None => format!("`{}`", entry.scenario),
            };
            errors.push(
                LoadError::at(
                    entry.pos.clone(),
                    format!(
                        "scenario {scenario} is listed both as a whole (line {}) and per check (line {}: `{}`)",
                        w.pos.line, c.pos.line, c.text
                    ),
                )
                .with_help(format!(
                    "keep either the whole-scenario entry `{}` or the per-check entries",
                    w.text
                )),
            );
        }
    }
}

/// Keys of the top-level mapping with their positions.
pub(super) struct Keys(Vec<At<String>>);

impl<'de> serde::Deserialize<'de> for Keys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeysVisitor;
        impl<'de> Visitor<'de> for KeysVisitor {
            type Value = Keys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<At<String>>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(Keys(keys))
            }
        }
        deserializer.deserialize_map(KeysVisitor)
    }
}
