//! A pack's parameters resolved (in the precedence of [`super`]'s doc) and its
//! requirements.

use serde_json::{Map, Value};
use std::sync::Arc;

use super::{ImportCtx, Resolver};
use crate::ground::load_error::LoadError;
use crate::ground::source::{Pos, SourceFile};
use crate::language::dsl::document::PackDoc;
use crate::language::dsl::params::{coerce, env_name, is_secret, type_error, unknown_parameter};
use crate::language::dsl::scenario::PackRequirement;
use crate::protocol::era::EraSelector;

impl Resolver<'_> {
    /// Resolve every declared parameter: the value used, or unset.
    pub(super) fn parameters(
        &mut self,
        doc: &PackDoc,
        file: &Arc<SourceFile>,
        import: Option<&ImportCtx<'_>>,
    ) -> Map<String, Value> {
        let mut values = Map::new();
        if let Some(i) = import {
            for (arg, v) in &i.doc.with {
                if !doc.parameters.contains_key(arg) {
                    let pos = Pos::new(i.file, v.line, v.col);
                    self.errors.push(unknown_parameter(
                        pos,
                        arg,
                        &doc.name,
                        doc.parameters.keys(),
                    ));
                }
            }
        }
        for (name, decl) in &doc.parameters {
            let decl_pos = Pos::new(file, decl.line, decl.col);
            let secret = is_secret(name, decl.secret);
            if let Some(d) = &decl.default
                && let Err(e) = coerce(&d.to_json(), decl.type_, false)
            {
                if secret {
                    mask_from_now_on(&d.to_json());
                }
                self.errors.push(type_error(
                    Pos::new(file, d.line, d.col),
                    name,
                    "default",
                    &e.describe(secret),
                ));
            }
            let env_var = env_name(name);
            // (value, given as text, where from); a bad default is reported above.
            let chosen: Option<(Value, bool, Result<Pos, String>)> =
                if let Some(g) = self.inputs.given.get(name) {
                    let origin = g.pos.clone().ok_or_else(|| format!("--set {name}"));
                    Some((g.value.clone(), g.from_text, origin))
                } else if let Some(v) = self
                    .inputs
                    .env
                    .then(|| std::env::var(&env_var).ok())
                    .flatten()
                {
                    Some((Value::String(v), true, Err(env_var.clone())))
                } else if let Some(v) = import.and_then(|i| i.doc.with.get(name)) {
                    Some((
                        v.to_json(),
                        false,
                        Ok(Pos::new(import.unwrap().file, v.line, v.col)),
                    ))
                } else {
                    decl.default.as_ref().and_then(|d| {
                        let v = d.to_json();
                        coerce(&v, decl.type_, false)
                            .is_ok()
                            .then(|| (v, false, Ok(Pos::new(file, d.line, d.col))))
                    })
                };
            match chosen {
                Some((value, from_text, origin)) => match coerce(&value, decl.type_, from_text) {
                    Ok(v) => {
                        // Declared secret, or named like one: masked whatever the source.
                        if secret
                            && let Some(text) = crate::ground::redact::secret_text(&v)
                        {
                            self.secrets.push(text);
                        }
                        values.insert(name.clone(), v);
                    }
                    Err(e) => {
                        if secret {
                            mask_from_now_on(&value);
                        }
                        self.errors.push(match origin {
                        Ok(pos) => type_error(pos, name, "value", &e.describe(secret)),
                        Err(label) => LoadError::file(
                            label,
                            format!(
                                "parameter `{name}` of pack `{}`: {}",
                                *doc.name,
                                e.describe(secret)
                            ),
                        )
                        .with_help(format!("declared at {decl_pos}")),
                        })
                    }
                },
                None if decl.required && self.inputs.check_required => self.errors.push(
                    LoadError::at(
                        decl_pos,
                        format!("parameter `{name}` of pack `{}` is required and not set", *doc.name),
                    )
                    .with_help(format!(
                        "set it with `--set {name}=VALUE`, `parameters:` in mcpspec.yaml or {env_var}"
                    )),
                ),
                None => {}
            }
        }
        values
    }

    pub(super) fn requirement(
        &mut self,
        doc: &PackDoc,
        file: &Arc<SourceFile>,
    ) -> Option<Arc<PackRequirement>> {
        let r = doc.requires.as_ref()?;
        let mut eras = Vec::new();
        for e in &r.eras {
            match EraSelector::parse(e) {
                Ok(sel) => eras.push(sel),
                Err(msg) => self.errors.push(
                    LoadError::at(Pos::new(file, e.line, e.col), msg)
                        .suggesting(e, crate::protocol::era::NAMES),
                ),
            }
        }
        for c in &r.capabilities {
            if c.trim().is_empty() {
                self.errors.push(LoadError::at(
                    Pos::new(file, c.line, c.col),
                    "empty capability name",
                ));
            }
        }
        Some(Arc::new(PackRequirement {
            pack: doc.name.value.clone(),
            eras,
            capabilities: r.capabilities.iter().map(|c| c.value.clone()).collect(),
        }))
    }
}

/// A secret's value of the wrong type: masked in every output from now on, so that the
/// snippet of its error (the line that holds it) does not show it.
fn mask_from_now_on(value: &Value) {
    if let Some(text) = crate::ground::redact::secret_text(value) {
        crate::ground::redact::remember(&[text]);
    }
}

pub(super) fn describe_requirement(r: &PackRequirement) -> String {
    let mut parts = Vec::new();
    if !r.eras.is_empty() {
        let eras: Vec<String> = r.eras.iter().map(EraSelector::label).collect();
        parts.push(format!("eras [{}]", eras.join(", ")));
    }
    if !r.capabilities.is_empty() {
        parts.push(format!("capabilities [{}]", r.capabilities.join(", ")));
    }
    parts.join(", ")
}
