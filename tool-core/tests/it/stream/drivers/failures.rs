//! Streams that fail: truncated streams fail at finish, malformed JSON names its line, and
//! provider error events end the stream with their message.

use super::*;

#[test]
fn truncated_streams_fail_at_finish() {
    let out = decode_every_way(Dialect::Anthropic, "anthropic_truncated.sse");
    assert_eq!(skeleton(&out.events), "S0 D0 D0");
    assert_eq!(
        error_message(&out),
        "the stream ended before the input of tool call `toolu_cut` (get_weather) was complete"
    );

    let out = decode_every_way(Dialect::OpenAiChat, "openai_chat_truncated.sse");
    assert_eq!(skeleton(&out.events), "S0 D0");
    assert_eq!(
        error_message(&out),
        "line 5: the stream ended in the middle of an event (no closing blank line)"
    );
}

#[test]
fn malformed_json_names_the_line() {
    let out = decode_every_way(Dialect::OpenAiChat, "openai_chat_malformed.sse");
    assert_eq!(skeleton(&out.events), "S0 D0");
    let message = error_message(&out);
    assert!(
        message.starts_with("line 7: malformed JSON in the data of a `message` event (EOF while parsing an object"),
        "{message}"
    );
    assert!(message.contains(r#"{\"id\":\"chatcmpl-AjX9fQ2mZ8kD\""#), "{message}");

    // When the bad event comes in the same chunk as good ones, the good ones come first and the
    // error from the next call.
    let mut decoder = StreamDecoder::new(Dialect::OpenAiChat);
    let events = decoder.push(&fixture("openai_chat_malformed.sse")).unwrap();
    assert_eq!(skeleton(&events), "S0 D0");
    assert_eq!(decoder.finish().unwrap_err().message, message);
}

#[test]
fn provider_error_events() {
    let out = decode_every_way(Dialect::Anthropic, "anthropic_error.sse");
    assert_eq!(skeleton(&out.events), "S0 D0");
    assert_eq!(
        error_message(&out),
        "line 11: the provider sent an error: overloaded_error: Overloaded"
    );

    let out = decode_every_way(Dialect::OpenAiChat, "openai_chat_error.sse");
    assert_eq!(skeleton(&out.events), "S0");
    assert_eq!(
        error_message(&out),
        "line 3: the provider sent an error: server_error: The server had an error while processing your request. Sorry about that!"
    );

    let out = decode_every_way(Dialect::OpenAiResponses, "openai_responses_failed.sse");
    assert_eq!(skeleton(&out.events), "S0");
    assert_eq!(
        error_message(&out),
        "line 8: the provider sent `response.failed`: server_error: The model failed to generate a response."
    );
}
