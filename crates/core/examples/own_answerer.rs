//! A harness wires its own answerer into the tool and runs one call:
//! `cargo run -p ask-user-core --example own_answerer`.
//!
//! The answerer here reads one line per question from stdin (a stand-in for a real UI: a chat
//! window, a push notification, a web form); the tool decodes the model's arguments, asks, and
//! prints exactly what the model would read.

use std::io::BufRead;
use std::sync::Arc;

use ask_user_core::{
    AnswerItem, Answers, AskError, AskUserQuestionRequest, AskUserQuestionTool, BoxFuture,
    CancellationToken, ExecutionContext, OneStep,
};

/// Asks on stderr, reads answers from stdin: an option number, or any other text as the
/// human's own answer; an empty line skips the question. It acknowledges nothing (the tool
/// offers its answer on its behalf), so one closure is the whole answerer ([`OneStep`]); an
/// answerer that tells the human "sent" implements [`ask_user_core::UserInteraction`] itself.
fn line_answerer(
    request: &AskUserQuestionRequest,
    _cancel: CancellationToken,
) -> BoxFuture<'_, Result<Answers, AskError>> {
    Box::pin(async move {
        let mut lines = std::io::stdin().lock().lines();
        let mut answers = Vec::new();
        for q in request.questions() {
            eprintln!("{}", q.question);
            for (i, option) in q.options.iter().enumerate() {
                eprintln!("  {}. {}", i + 1, option.label);
            }
            let Some(Ok(line)) = lines.next() else {
                return Err(AskError::Dismissed);
            };
            let line = line.trim();
            let picked = line
                .parse::<usize>()
                .ok()
                .and_then(|n| q.options.get(n.wrapping_sub(1)));
            answers.push(match picked {
                Some(option) => AnswerItem::selected(&q.id, [option.label.clone()]),
                None => AnswerItem::custom(&q.id, line),
            });
        }
        Ok(Answers { answers })
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let arguments = r#"{"questions":[{"id":"db","question":"Which database?","options":["PostgreSQL (Recommended)","SQLite"]},{"id":"name","question":"Service name?"}]}"#;
    let tool = AskUserQuestionTool::new(Arc::new(OneStep::new(line_answerer)));
    let outcome = tool.call(arguments, ExecutionContext::default()).await;
    println!("{}", outcome.text());
    std::process::exit(outcome.exit_code());
}
