//! The scenario files of a pack: its `scenarios:` globs, or every YAML file of its folder.

use std::path::Path;
use std::sync::Arc;

use super::{Resolver, Source};
use crate::ground::load_error::LoadError;
use crate::ground::source::{Pos, SourceFile};
use crate::language::dsl::discover;
use crate::language::dsl::document::PackDoc;

impl Resolver<'_> {
    /// The pack's scenario files: (name, text).
    pub(super) fn scenario_files(
        &mut self,
        source: &Source,
        dir: Option<&Path>,
        doc: &PackDoc,
        file: &Arc<SourceFile>,
    ) -> Vec<(String, String)> {
        let (Source::Dir(_), Some(dir)) = (source, dir) else {
            let Source::Builtin(name) = source else {
                return Vec::new();
            };
            return crate::language::dsl::builtin::pack_files(name)
                .map(|(rel, text)| (format!("builtin:{rel}"), text.to_string()))
                .collect();
        };
        let mut paths = Vec::new();
        match &doc.scenarios {
            None => {
                if let Err(e) = discover::collect_yaml(dir, &mut paths, &mut Vec::new()) {
                    self.errors.push(LoadError::file(
                        dir.display().to_string(),
                        format!("cannot read folder: {e}"),
                    ));
                }
            }
            Some(list) => {
                for entry in list {
                    let path = dir.join(&entry.value);
                    if path.is_file() {
                        paths.push(path);
                    } else if path.is_dir() {
                        let _ = discover::collect_yaml(&path, &mut paths, &mut Vec::new());
                    } else {
                        self.errors.push(
                            LoadError::at(
                                Pos::new(file, entry.line, entry.col),
                                format!("no scenario file or folder `{}`", path.display()),
                            )
                            .with_help(
                                "`scenarios:` lists files and folders relative to the pack folder",
                            ),
                        );
                    }
                }
            }
        }
        paths.sort();
        paths.dedup();
        paths
            .into_iter()
            .filter_map(|p| {
                let name = p.display().to_string();
                match crate::ground::source::read_text(&p) {
                    Ok(text) => Some((name, text)),
                    Err(e) => {
                        self.errors.push(LoadError::unreadable(&name, e));
                        None
                    }
                }
            })
            .collect()
    }
}
