//! A call of a pack's step group (`group: NAME`): expanded in place, its steps compiled
//! against the pack manifest, with the caller's arguments as variables.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{Compiler, list};
use crate::ground::load_error::{LoadError, did_you_mean};
use crate::ground::yaml::value::At;
use crate::language::dsl::discover::MANIFEST;
use crate::language::dsl::scenario::{GroupCall, Step};
use crate::language::dsl::{document, template};

impl Compiler {
    /// Expand `use: GROUP` into the group's steps: arguments checked against the group's
    /// parameters, step names prefixed by the call's `name`, positions in the manifest
    /// (each error also names the calling line).
    pub(super) fn group_call(
        &mut self,
        call: At<document::StepDoc>,
        known: &mut BTreeSet<String>,
    ) -> Vec<Step> {
        let call_pos = self.at(&call);
        let call = call.value;
        let used = call.use_.clone().expect("a group call");
        let use_pos = self.at(&used);
        let extra = [
            ("description", call.description.is_some()),
            ("eras", call.eras.is_some()),
            ("transport", call.transport.is_some()),
            ("requires", call.requires.is_some()),
            ("level", call.level.is_some()),
            ("rule", call.rule.is_some()),
            ("timeout", call.timeout.is_some()),
            ("retry", call.retry.is_some()),
            ("request", call.request.is_some()),
            ("notification", call.notification.is_some()),
            ("raw", call.raw.is_some()),
            ("contract", call.contract.is_some()),
            ("handshake", call.handshake.is_some()),
            ("check", call.check.is_some()),
            ("roots", call.roots.is_some()),
            ("expect", !call.expect.is_empty()),
            ("capture", !call.capture.is_empty()),
        ];
        if let Some((key, _)) = extra.iter().find(|(_, given)| *given) {
            self.errors.push(
                LoadError::at(use_pos, format!("a group call takes no `{key}`"))
                    .with_help("a step with `use:` takes only `name` (a prefix of the group's step names) and `with` (the arguments)"),
            );
            return Vec::new();
        }
        let Some(groups) = self.groups.clone() else {
            self.errors.push(
                LoadError::at(use_pos, format!("no step group `{}`: this scenario is not part of a pack", *used))
                    .with_help(format!("step groups are defined under `groups:` in a pack's {MANIFEST}; run the pack's folder")),
            );
            return Vec::new();
        };
        let Some(group) = groups.groups.get(used.as_str()) else {
            let defined: BTreeSet<String> = groups.groups.keys().cloned().collect();
            let help = match did_you_mean(&used, defined.iter().map(String::as_str)) {
                Some(s) => format!(
                    "did you mean `{s}`? groups of pack `{}`: {}",
                    groups.pack,
                    list(&defined)
                ),
                None if defined.is_empty() => format!("pack `{}` defines no groups", groups.pack),
                None => format!("groups of pack `{}`: {}", groups.pack, list(&defined)),
            };
            self.errors
                .push(LoadError::at(use_pos, format!("no step group `{}`", *used)).with_help(help));
            return Vec::new();
        };
        let errors_before = self.errors.0.len();
        // Arguments: literals are type-checked now, templates against the caller's variables.
        let given = call
            .with
            .as_ref()
            .map(|w| w.value.clone())
            .unwrap_or_default();
        let mut args = Vec::new();
        for (arg, value) in &given {
            if !group.parameters.contains_key(arg) {
                let pos = self.pos(value.line, value.col);
                self.errors
                    .push(crate::language::dsl::params::unknown_parameter(
                        pos,
                        arg,
                        &format!("group {}", *used),
                        group.parameters.keys(),
                    ));
            }
        }
        for (name, decl) in &group.parameters {
            match given.get(name) {
                Some(value) => {
                    self.check_templates(value, known);
                    let literal = !value.as_str().is_some_and(template::is_template);
                    if literal
                        && let Err(e) = crate::language::dsl::params::coerce(
                            &value.to_json(),
                            decl.type_,
                            false,
                        )
                    {
                        let secret = crate::language::dsl::params::is_secret(name, decl.secret);
                        self.error(
                            self.pos(value.line, value.col),
                            format!(
                                "argument `{name}` of group `{}`: {}",
                                *used,
                                e.describe(secret)
                            ),
                        );
                    }
                    args.push((name.clone(), value.clone()));
                }
                None => match &decl.default {
                    Some(d) => args.push((name.clone(), d.clone())),
                    None => {
                        let pos = call
                            .with
                            .as_ref()
                            .map(|w| self.at(w))
                            .unwrap_or_else(|| use_pos.clone());
                        self.errors.push(
                            LoadError::at(pos, format!("missing argument `{name}` of group `{}`", *used))
                                .with_help(format!(
                                    "add it under `with:`; the group's parameters without a default are required: {}",
                                    group.parameters.iter().filter(|(_, d)| d.default.is_none()).map(|(k, _)| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                                )),
                        );
                    }
                },
            }
        }
        let shared = Arc::new(GroupCall {
            group: used.value.clone(),
            args,
        });
        // The group's steps, compiled with positions in the manifest.
        let caller_file = std::mem::replace(&mut self.file, groups.file.clone());
        let mut inner = known.clone();
        inner.extend(group.parameters.keys().cloned());
        let prefix = call.name.as_ref().map(|n| n.value.clone());
        let mut steps = Vec::new();
        for step in group.steps.clone() {
            if step.use_.is_some() {
                let p = self.at(&step);
                self.errors.push(
                    LoadError::at(p, "a group step cannot call another group")
                        .with_help("list the steps of both groups in the scenario instead"),
                );
                continue;
            }
            if let Some(compiled) = self.step(step, &inner, prefix.as_deref()) {
                for c in &compiled.captures {
                    inner.insert(c.name.clone());
                    known.insert(c.name.clone());
                }
                let mut compiled = compiled;
                compiled.call = Some(shared.clone());
                steps.push(compiled);
            }
        }
        self.file = caller_file;
        // An error inside the group is reported once, with a note per calling line.
        let note = format!("in group `{}` called at {call_pos}", *used);
        let new = self.errors.0.split_off(errors_before);
        for mut e in new {
            let in_group = e
                .pos
                .as_ref()
                .is_some_and(|p| Arc::ptr_eq(&p.file, &groups.file));
            if !in_group {
                self.errors.push(e);
                continue;
            }
            let same = self.errors.0.iter_mut().find(|old| {
                old.message == e.message
                    && old
                        .pos
                        .as_ref()
                        .map(|p| (p.line, p.col, p.file.name.as_str()))
                        == e.pos
                            .as_ref()
                            .map(|p| (p.line, p.col, p.file.name.as_str()))
            });
            match same {
                Some(old) => old.notes.push(note.clone()),
                None => {
                    e.notes.push(note.clone());
                    self.errors.push(e);
                }
            }
        }
        steps
    }
}
