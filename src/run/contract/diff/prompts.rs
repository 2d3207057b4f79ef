//! Changes of prompts: fields and arguments.

use serde_json::{Value, json};

use super::{Builder, key_of, pair_renames, split};
use crate::language::contract_rules::change_kind::ChangeKind;
use crate::run::contract::schema_diff::{Breaks, Models};

pub(super) fn prompts(b: &mut Builder, before: &[Value], after: &[Value]) {
    let list = "prompts";
    let (removed, added, both) = split(before, after, "name");
    let same_args = |x: &Value, y: &Value| {
        x.get("arguments") == y.get("arguments") && x.get("description") == y.get("description")
    };
    let (removed, added, renamed) = pair_renames(removed, added, same_args);
    b.membership(
        list,
        "name",
        &removed,
        &renamed,
        &added,
        ChangeKind::Renamed,
        Models::Yes,
    );
    for (old, new) in both {
        let name = key_of(old, "name");
        b.title_and_description(list, name, old, new);
        let args = |v: &Value| {
            v.get("arguments")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let (xa, ya) = (args(old), args(new));
        let (gone, new_args, kept) = split(&xa, &ya, "name");
        let required = |v: &Value| v.get("required").and_then(Value::as_bool).unwrap_or(false);
        for a in gone {
            let path = format!("arguments.{}", key_of(a, "name"));
            b.push(
                list,
                name,
                ChangeKind::ArgumentRemoved,
                Some(path),
                Some(a.clone()),
                None,
                Breaks::Yes,
                Models::Yes,
            );
        }
        for a in new_args {
            let path = format!("arguments.{}", key_of(a, "name"));
            if required(a) {
                b.push(
                    list,
                    name,
                    ChangeKind::RequiredArgumentAdded,
                    Some(path),
                    None,
                    Some(a.clone()),
                    Breaks::Yes,
                    Models::Yes,
                );
            } else {
                b.push(
                    list,
                    name,
                    ChangeKind::OptionalArgumentAdded,
                    Some(path),
                    None,
                    Some(a.clone()),
                    Breaks::No,
                    Models::Possibly,
                );
            }
        }
        for (x, y) in kept {
            let path = format!("arguments.{}", key_of(x, "name"));
            match (required(x), required(y)) {
                (false, true) => b.push(
                    list,
                    name,
                    ChangeKind::ArgumentBecameRequired,
                    Some(format!("{path}.required")),
                    Some(json!(false)),
                    Some(json!(true)),
                    Breaks::Yes,
                    Models::Yes,
                ),
                (true, false) => b.push(
                    list,
                    name,
                    ChangeKind::ArgumentBecameOptional,
                    Some(format!("{path}.required")),
                    Some(json!(true)),
                    Some(json!(false)),
                    Breaks::No,
                    Models::Possibly,
                ),
                _ => {}
            }
            for (field, kind) in [
                ("description", ChangeKind::ArgumentDescriptionChanged),
                ("title", ChangeKind::ArgumentTitleChanged),
            ] {
                if x.get(field) != y.get(field) {
                    b.push(
                        list,
                        name,
                        kind,
                        Some(format!("{path}.{field}")),
                        x.get(field).cloned(),
                        y.get(field).cloned(),
                        Breaks::No,
                        Models::Yes,
                    );
                }
            }
        }
    }
}
