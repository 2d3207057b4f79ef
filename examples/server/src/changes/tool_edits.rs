//! Edits of one tool's definition in place, each changing one path of it
//! (`add-required-param`, …).

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

use super::Change;

type ToolEdit = fn(&mut Tool);

/// The tool a change edits in place, and the edit.
pub(super) fn tool_edit(change: Change) -> Option<(&'static str, ToolEdit)> {
    use Change::*;
    let edit: (&str, ToolEdit) = match change {
        AddRequiredParam => ("get_weather", |tool| {
            let schema = input(tool);
            properties(schema).insert(
                "country".to_owned(),
                json!({"type": "string", "description": "Country of the city"}),
            );
            required(schema).push(json!("country"));
        }),
        AddOptionalParam => ("get_weather", |tool| {
            properties(input(tool)).insert(
                "lang".to_owned(),
                json!({"type": "string", "description": "Language of the conditions text"}),
            );
        }),
        ParamBecameRequired => ("get_weather", |tool| {
            required(input(tool)).push(json!("units"))
        }),
        ParamBecameOptional => ("add", |tool| {
            required(input(tool)).retain(|name| name != "b")
        }),
        RemoveParam => ("get_weather", |tool| {
            properties(input(tool)).remove("units");
        }),
        AddEnum => ("echo", |tool| {
            set(input(tool), "text", "enum", json!(["hello", "world"]))
        }),
        ShrinkEnum => ("get_weather", |tool| {
            set(input(tool), "units", "enum", json!(["celsius"]))
        }),
        WidenEnum => ("get_weather", |tool| {
            set(
                input(tool),
                "units",
                "enum",
                json!(["celsius", "fahrenheit", "kelvin"]),
            )
        }),
        ChangeType => ("add", |tool| set(input(tool), "a", "type", json!("string"))),
        WidenType => ("add", |tool| {
            set(input(tool), "a", "type", json!(["number", "string"]))
        }),
        AddMaximum => ("slow", |tool| {
            set(input(tool), "ms", "maximum", json!(1000))
        }),
        RaiseMinimum => ("slow", |tool| set(input(tool), "ms", "minimum", json!(10))),
        LowerMinimum => ("slow", |tool| set(input(tool), "ms", "minimum", json!(-5))),
        AddMaxLength => ("echo", |tool| {
            set(input(tool), "text", "maxLength", json!(100))
        }),
        AddPattern => ("get_weather", |tool| {
            set(input(tool), "city", "pattern", json!("^[A-Z]"))
        }),
        AddFormat => ("create_note", |tool| {
            set(input(tool), "title", "format", json!("email"))
        }),
        CloseAdditionalProperties => ("add", |tool| {
            input(tool).insert("additionalProperties".to_owned(), json!(false));
        }),
        AddConst => ("echo", |tool| {
            set(input(tool), "text", "const", json!("hi"))
        }),
        AddOneOf => ("add", |tool| {
            if let Some(a) = property(input(tool), "a") {
                a.remove("type");
                a.insert(
                    "oneOf".to_owned(),
                    json!([{"type": "number"}, {"type": "string"}]),
                );
            }
        }),
        AddRef => ("get_weather", |tool| {
            let schema = input(tool);
            if let Some(units) = properties(schema).remove("units") {
                schema.insert("$defs".to_owned(), json!({ "units": units }));
                properties(schema).insert("units".to_owned(), json!({"$ref": "#/$defs/units"}));
            }
        }),
        RemoveOutputProperty => ("get_weather", |tool| {
            if let Some(schema) = output(tool) {
                properties(schema).remove("conditions");
                required(schema).retain(|name| name != "conditions");
            }
        }),
        RenameOutputProperty => ("get_weather", |tool| {
            if let Some(schema) = output(tool) {
                if let Some(temperature) = properties(schema).remove("temperature") {
                    properties(schema).insert("temp".to_owned(), temperature);
                }
                for name in required(schema) {
                    if name == "temperature" {
                        *name = json!("temp");
                    }
                }
            }
        }),
        ChangeOutputType => ("add", |tool| {
            if let Some(schema) = output(tool) {
                set(schema, "sum", "type", json!("string"));
            }
        }),
        OutputPropertyOptional => ("get_weather", |tool| {
            if let Some(schema) = output(tool) {
                required(schema).retain(|name| name != "conditions");
            }
        }),
        AddOutputProperty => ("get_weather", |tool| {
            if let Some(schema) = output(tool) {
                properties(schema).insert(
                    "humidity".to_owned(),
                    json!({"type": "number", "description": "Relative humidity, in percent"}),
                );
            }
        }),
        RemoveOutputSchema => ("add", |tool| tool.output_schema = None),
        AddOutputSchema => ("echo", |tool| {
            tool.output_schema = Some(Arc::new(object(json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            }))));
        }),
        ChangeDescription => ("echo", |tool| {
            tool.description = Some("Return the given text exactly as it was sent.".into());
        }),
        ChangeTitle => ("echo", |tool| tool.title = Some("Echo Text".to_owned())),
        EchoClaimsWeather => ("echo", |tool| {
            tool.description = Some("Current weather, as given text.".into());
        }),
        ChangeAnnotations => ("get_weather", |tool| {
            if let Some(annotations) = tool.annotations.as_mut() {
                annotations.open_world_hint = Some(true);
            }
        }),
        ChangeParamDescription => ("add", |tool| {
            set(
                input(tool),
                "a",
                "description",
                json!("The number to add to"),
            )
        }),
        InvalidXMcpHeader => ("get_weather", |tool| {
            set(input(tool), "city", "x-mcp-header", json!("City Name"))
        }),
        ValidXMcpHeader => ("get_weather", |tool| {
            set(input(tool), "city", "x-mcp-header", json!("City"))
        }),
        _ => return None,
    };
    Some(edit)
}

pub(super) fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        other => panic!("schema must be an object: {other}"),
    }
}

fn input(tool: &mut Tool) -> &mut JsonObject {
    Arc::make_mut(&mut tool.input_schema)
}

pub(super) fn output(tool: &mut Tool) -> Option<&mut JsonObject> {
    tool.output_schema.as_mut().map(Arc::make_mut)
}

/// `schema.properties`, created if absent.
pub(super) fn properties(schema: &mut JsonObject) -> &mut JsonObject {
    let value = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if !value.is_object() {
        *value = Value::Object(JsonObject::new());
    }
    value.as_object_mut().expect("just made an object")
}

/// `schema.required`, created if absent.
pub(super) fn required(schema: &mut JsonObject) -> &mut Vec<Value> {
    let value = schema.entry("required").or_insert_with(|| json!([]));
    if !value.is_array() {
        *value = json!([]);
    }
    value.as_array_mut().expect("just made an array")
}

pub(super) fn property<'a>(schema: &'a mut JsonObject, name: &str) -> Option<&'a mut JsonObject> {
    properties(schema).get_mut(name)?.as_object_mut()
}

/// Sets `keyword` of property `name` (no-op if another change removed the property).
pub(super) fn set(schema: &mut JsonObject, name: &str, keyword: &str, value: Value) {
    if let Some(property) = property(schema, name) {
        property.insert(keyword.to_owned(), value);
    }
}
