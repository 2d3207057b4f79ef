//! The four paginated lists of a server's contract, and everything that differs between them.

/// One paginated list kind. `ListKind::ALL` is the order used in reports and snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ListKind {
    Tools,
    Resources,
    ResourceTemplates,
    Prompts,
}

impl ListKind {
    pub const ALL: [ListKind; 4] = [
        ListKind::Tools,
        ListKind::Resources,
        ListKind::ResourceTemplates,
        ListKind::Prompts,
    ];

    /// The request method: `tools/list`.
    pub const fn method(self) -> &'static str {
        match self {
            ListKind::Tools => super::methods::TOOLS_LIST,
            ListKind::Resources => super::methods::RESOURCES_LIST,
            ListKind::ResourceTemplates => super::methods::RESOURCES_TEMPLATES_LIST,
            ListKind::Prompts => super::methods::PROMPTS_LIST,
        }
    }

    /// The key of the array in the result: `tools`, `resourceTemplates`.
    pub const fn result_key(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Resources => "resources",
            ListKind::ResourceTemplates => "resourceTemplates",
            ListKind::Prompts => "prompts",
        }
    }

    /// The field that identifies an item of this list: `name`, `uri`, `uriTemplate`.
    pub const fn item_id(self) -> &'static str {
        match self {
            ListKind::Tools | ListKind::Prompts => "name",
            ListKind::Resources => "uri",
            ListKind::ResourceTemplates => "uriTemplate",
        }
    }

    /// The server capability that declares the list (templates come with `resources`).
    pub const fn capability(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Resources | ListKind::ResourceTemplates => "resources",
            ListKind::Prompts => "prompts",
        }
    }

    /// The kind's name in contract snapshots and change reports: `resource-templates`.
    pub const fn snapshot_name(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Resources => "resources",
            ListKind::ResourceTemplates => "resource-templates",
            ListKind::Prompts => "prompts",
        }
    }

    /// The file of a contract snapshot that holds this list: `resource-templates.json`.
    pub const fn snapshot_file(self) -> &'static str {
        match self {
            ListKind::Tools => "tools.json",
            ListKind::Resources => "resources.json",
            ListKind::ResourceTemplates => "resource-templates.json",
            ListKind::Prompts => "prompts.json",
        }
    }

    /// The `notifications/…/list_changed` of this list (templates have none of their own).
    pub const fn list_changed_method(self) -> Option<&'static str> {
        match self {
            ListKind::Tools => Some(super::methods::NOTIFICATIONS_TOOLS_LIST_CHANGED),
            ListKind::Resources => Some(super::methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED),
            ListKind::Prompts => Some(super::methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED),
            ListKind::ResourceTemplates => None,
        }
    }

    /// The field of a `subscriptions/listen` filter (`SubscriptionFilter`, 2026-07-28) that
    /// opts in to this list's `list_changed`: `toolsListChanged`.
    pub const fn listen_filter_key(self) -> Option<&'static str> {
        match self {
            ListKind::Tools => Some("toolsListChanged"),
            ListKind::Resources => Some("resourcesListChanged"),
            ListKind::Prompts => Some("promptsListChanged"),
            ListKind::ResourceTemplates => None,
        }
    }

    /// The kind whose list method this is, if any.
    pub fn from_method(method: &str) -> Option<ListKind> {
        ListKind::ALL.into_iter().find(|k| k.method() == method)
    }

    /// The stable identity of an item of this list (its id field), if it has one.
    pub fn id_of(self, item: &serde_json::Value) -> Option<&str> {
        item.get(self.item_id()).and_then(serde_json::Value::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_round_trip() {
        for kind in ListKind::ALL {
            assert_eq!(ListKind::from_method(kind.method()), Some(kind));
        }
        assert_eq!(ListKind::from_method("tools/call"), None);
    }
}
