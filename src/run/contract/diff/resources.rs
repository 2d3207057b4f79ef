//! Changes of resources and resource templates: identity, name, MIME type.

use serde_json::Value;

use super::{Builder, key_of, pair_renames, split};
use crate::language::contract_rules::change_kind::ChangeKind;
use crate::run::contract::schema_diff::{Breaks, Models};

/// Resources (by `uri`) and resource templates (by `uriTemplate`): a removed and an added
/// item with the same `name` is a changed URI.
pub(super) fn resources(b: &mut Builder, list: &str, key: &str, before: &[Value], after: &[Value]) {
    let (removed, added, both) = split(before, after, key);
    let same_name =
        |x: &Value, y: &Value| x.get("name").is_some() && x.get("name") == y.get("name");
    let (removed, added, moved) = pair_renames(removed, added, same_name);
    let changed_kind = if key == "uri" {
        ChangeKind::UriChanged
    } else {
        ChangeKind::UriTemplateChanged
    };
    b.membership(
        list,
        key,
        &removed,
        &moved,
        &added,
        changed_kind,
        Models::Possibly,
    );
    for (old, new) in both {
        let name = key_of(old, key);
        b.field(
            list,
            name,
            old,
            new,
            "name",
            ChangeKind::NameChanged,
            Breaks::No,
            Models::Possibly,
        );
        b.title_and_description(list, name, old, new);
        b.field(
            list,
            name,
            old,
            new,
            "mimeType",
            ChangeKind::MimeTypeChanged,
            Breaks::Yes,
            Models::Possibly,
        );
    }
}
