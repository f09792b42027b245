//! An ACP error as one line a person reads: the error's message, and the error code the agent
//! put in `data.code` (ided's `ErrorCode`) in brackets. The JSON of `data` is never shown
//! (the SDK's `Display` appends it pretty-printed); it goes to the log instead.

use serde_json::Value;

/// JSON-RPC's stock error messages.
const GENERIC: [&str; 5] = [
    "Parse error",
    "Invalid request",
    "Method not found",
    "Invalid params",
    "Internal error",
];

/// The human text of an ACP error.
pub fn human(error: &agent_client_protocol::Error) -> String {
    log::debug!("agent error: {error:?}");
    let message = error.message.trim();
    let mut message = if message.is_empty() {
        format!("error {}", i32::from(error.code))
    } else {
        message.to_owned()
    };
    // JSON-RPC's stock messages say only the kind of error; ided says what in `data.details`.
    if GENERIC.contains(&message.as_str())
        && let Some(details) = error
            .data
            .as_ref()
            .and_then(|d| d.get("details"))
            .and_then(Value::as_str)
    {
        message = format!("{message}: {details}");
    }
    match error.data.as_ref().and_then(data_code) {
        Some(code) if !message.contains(&code) => format!("{message} [{code}]"),
        _ => message,
    }
}

/// ided's error code in an error's `data` (`{"code": "...", "details": "..."}`).
fn data_code(data: &Value) -> Option<String> {
    data.get("code").and_then(Value::as_str).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_ided_error_reads_as_its_message_and_code_without_json() {
        let mut error = agent_client_protocol::Error::internal_error();
        error.message = "run r-1 is rolled back, not accepted: nothing to roll back".into();
        error.data = Some(json!({"code": "vcs_error", "details": "run r-1 is rolled back"}));
        let shown = human(&error);
        assert_eq!(
            shown,
            "run r-1 is rolled back, not accepted: nothing to roll back [vcs_error]"
        );
        assert!(!shown.contains('{'), "{shown}");
    }

    #[test]
    fn a_stock_message_is_followed_by_what_ided_said_in_details() {
        let mut error = agent_client_protocol::Error::invalid_params();
        error.message = "Invalid params".into();
        error.data = Some(json!({"method": "_ided/intel/find_definition", "details": "line: Input should be >= 1"}));
        assert_eq!(human(&error), "Invalid params: line: Input should be >= 1");
    }

    #[test]
    fn an_error_without_a_message_names_its_code() {
        let mut error = agent_client_protocol::Error::internal_error();
        error.message = String::new();
        error.data = Some(json!(["opaque"]));
        assert_eq!(human(&error), "error -32603");
    }
}
