//! The `Notification` hook's data: Cline's `NotificationData` (`core/hooks/notification-hook.ts`,
//! v4.0.10), in `proto/cline/hooks.proto`'s field order — every field, `false` and `""`
//! included, as in agent-min's other hook inputs (Cline's protobuf JSON leaves them out).

use serde_json::{json, Map, Value};

/// Cline's `NOTIFICATION_MESSAGE_MAX_LENGTH`, in JavaScript (UTF-16) characters.
const MESSAGE_MAX: usize = 8000;

/// One notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Notification {
    event: &'static str,
    source: String,
    message: String,
    waiting_for_user_input: bool,
    source_type: &'static str,
    requires_user_action: bool,
}

impl Notification {
    /// The run waits for the person: an ask of kind `source` (Cline's ask types: `tool`,
    /// `command`, `followup`, …) saying `message` (`emitUserAttentionNotification`).
    pub(crate) fn user_attention(source: &str, message: &str) -> Notification {
        Notification {
            event: "user_attention",
            source: source.to_string(),
            message: message.to_string(),
            waiting_for_user_input: true,
            source_type: "ask",
            requires_user_action: true,
        }
    }

    /// `attempt_completion` with `result` (`emitTaskCompleteNotification`).
    pub(crate) fn task_complete(result: &str) -> Notification {
        Notification {
            event: "task_complete",
            source: "attempt_completion".to_string(),
            message: result.to_string(),
            waiting_for_user_input: false,
            source_type: "tool",
            requires_user_action: false,
        }
    }

    /// The hook's `notification` object (a new `eventId` each time).
    pub(crate) fn data(&self) -> Value {
        self.data_with_id(&ulid())
    }

    fn data_with_id(&self, event_id: &str) -> Value {
        let (message, truncated) = truncated(&self.message);
        let mut m = Map::new();
        let mut put = |k: &str, v: Value| {
            m.insert(k.to_string(), v);
        };
        put("event", json!(self.event));
        put("source", json!(self.source));
        put("message", json!(message));
        put("waitingForUserInput", json!(self.waiting_for_user_input));
        put("eventVersion", json!("1"));
        put("eventId", json!(event_id));
        put("messageTruncated", json!(truncated));
        put("sourceType", json!(self.source_type));
        put("sourceId", json!(self.source));
        put("requiresUserAction", json!(self.requires_user_action));
        put("severity", json!("info"));
        Value::Object(m)
    }
}

/// `message` cut to its first 8000 JavaScript characters with Cline's `\n...[truncated]`, and
/// whether it was (a cut never splits a character: a pair of UTF-16 halves stays whole or goes).
fn truncated(message: &str) -> (String, bool) {
    let mut units = 0;
    for (i, c) in message.char_indices() {
        units += c.len_utf16();
        if units > MESSAGE_MAX {
            return (format!("{}\n...[truncated]", &message[..i]), true);
        }
    }
    (message.to_string(), false)
}

/// A new ULID (Cline's `ulid()`): 48 bits of milliseconds and 80 random bits, in Crockford's
/// base 32.
fn ulid() -> String {
    const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let mut random = [0u8; 10];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = std::io::Read::read_exact(&mut f, &mut random);
    }
    let mut n = (ms & 0xffff_ffff_ffff) << 80;
    for (i, b) in random.iter().enumerate() {
        n |= u128::from(*b) << (72 - 8 * i);
    }
    (0..26).rev().map(|k| ALPHABET[((n >> (5 * k)) & 31) as usize] as char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_in_the_protos_order() {
        let v = Notification::user_attention("command", "npm test").data_with_id("01J");
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"event":"user_attention","source":"command","message":"npm test","waitingForUserInput":true,"eventVersion":"1","eventId":"01J","messageTruncated":false,"sourceType":"ask","sourceId":"command","requiresUserAction":true,"severity":"info"}"#
        );
        let v = Notification::task_complete("").data_with_id("01J");
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"event":"task_complete","source":"attempt_completion","message":"","waitingForUserInput":false,"eventVersion":"1","eventId":"01J","messageTruncated":false,"sourceType":"tool","sourceId":"attempt_completion","requiresUserAction":false,"severity":"info"}"#
        );
    }

    #[test]
    fn a_long_message_is_cut_as_cline_cuts_it() {
        let long = format!("{}é😀", "a".repeat(7998));
        let v = Notification::task_complete(&long).data_with_id("x");
        // 7998 + 1 units fit; the emoji's two would make 8001.
        assert_eq!(v["message"], format!("{}é\n...[truncated]", "a".repeat(7998)));
        assert_eq!(v["messageTruncated"], true);
        let exact = "b".repeat(8000);
        assert_eq!(Notification::task_complete(&exact).data_with_id("x")["message"], exact);
    }

    #[test]
    fn ulids_are_26_crockford_characters_and_differ() {
        let (a, b) = (ulid(), ulid());
        assert_eq!(a.len(), 26);
        assert!(a.bytes().all(|c| b"0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(&c)), "{a}");
        assert_ne!(a, b);
    }
}
