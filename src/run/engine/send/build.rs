//! A step's message rendered from its template and the variables, as the bytes to send.

use std::borrow::Cow;
use std::time::Duration;

use indexmap::IndexMap;
use serde_json::Value;

use crate::ground::yaml::value::TValue;
use crate::language::dsl::template::render_value;
use crate::language::dsl::{Action, Step};
use crate::protocol::methods;
use crate::run::client::connection::raw_outgoing;
use crate::run::client::{Connection, Outgoing};

/// A step rendered against the variables: the message, and what pagination reuses.
pub(super) struct Built<'s> {
    pub(super) out: Outgoing,
    pub(super) method: Cow<'s, str>,
    pub(super) params: Option<Cow<'s, Value>>,
    pub(super) meta: IndexMap<String, Value>,
    pub(super) headers: IndexMap<String, Option<String>>,
}

pub(super) fn build<'s>(
    step: &'s Step,
    conn: &mut Connection,
    ctx: &Value,
    timeout: Duration,
) -> Result<Built<'s>, String> {
    let render = |v: &TValue| {
        render_value(v, ctx).map_err(|(line, col, e)| template_error(step, line, col, &e))
    };
    // Params without templates are borrowed as compiled, not rebuilt per send.
    let render_params = |params: &'s Option<TValue>, fixed: &'s Option<Value>| {
        Ok::<_, String>(match (params, fixed) {
            (_, Some(fixed)) => Some(Cow::Borrowed(fixed)),
            (Some(p), None) => Some(Cow::Owned(render(p)?)),
            (None, None) => None,
        })
    };
    let render_map = |m: &IndexMap<String, TValue>| -> Result<IndexMap<String, Value>, String> {
        m.iter().map(|(k, v)| Ok((k.clone(), render(v)?))).collect()
    };
    let headers =
        |m: &IndexMap<String, TValue>| -> Result<IndexMap<String, Option<String>>, String> {
            m.iter()
                .map(|(k, v)| {
                    let value = match render(v)? {
                        Value::Null => None,
                        Value::String(s) => Some(s),
                        other => Some(other.to_string()),
                    };
                    Ok((k.clone(), value))
                })
                .collect()
        };
    match &step.action {
        Action::Contract { .. } | Action::Check { .. } | Action::Handshake => {
            unreachable!("contract, check and handshake steps do not send one message")
        }
        Action::Request {
            method,
            params,
            fixed_params,
            id,
            meta,
            headers: h,
            task,
            ..
        } => {
            let mut params = render_params(params, fixed_params)?;
            if let Some(run) = task {
                params = Some(Cow::Owned(crate::run::engine::tasks::augmented(
                    params.as_deref(),
                    run,
                )));
            }
            let id = match id {
                Some(v) => render(v)?,
                None => conn.next_id(),
            };
            let (meta, headers) = (render_map(meta)?, headers(h)?);
            let out = conn.build_ref(
                method,
                params.as_deref(),
                Some(id),
                &meta,
                &headers,
                timeout,
            );
            Ok(Built {
                out,
                method: Cow::Borrowed(method),
                params,
                meta,
                headers,
            })
        }
        Action::Roots(_) => {
            let (meta, headers) = (IndexMap::new(), IndexMap::new());
            let method = methods::NOTIFICATIONS_ROOTS_LIST_CHANGED;
            let out = conn.build_ref(method, None, None, &meta, &headers, timeout);
            Ok(Built {
                out,
                method: Cow::Borrowed(method),
                params: None,
                meta,
                headers,
            })
        }
        Action::Notification {
            method,
            params,
            fixed_params,
            meta,
            headers: h,
        } => {
            let params = render_params(params, fixed_params)?;
            let (meta, headers) = (render_map(meta)?, headers(h)?);
            let out = conn.build_ref(method, params.as_deref(), None, &meta, &headers, timeout);
            Ok(Built {
                out,
                method: Cow::Borrowed(method),
                params,
                meta,
                headers,
            })
        }
        Action::Raw {
            body,
            headers: h,
            http_method,
            ..
        } => {
            let body = render(body)?;
            let headers = headers(h)?;
            let out = raw_outgoing(&body, &headers, http_method.clone(), timeout);
            let method = body
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let params = body.get("params").cloned().map(Cow::Owned);
            Ok(Built {
                out,
                method: Cow::Owned(method),
                params,
                meta: IndexMap::new(),
                headers,
            })
        }
    }
}

pub(super) fn template_error(step: &Step, line: u32, col: u32, message: &str) -> String {
    let pos = crate::ground::source::Pos::new(&step.pos.file, line, col);
    format!("template error at {pos}: {message}")
}
