//! `CommandGate`: the one gate in front of a shell command, for `ken exec` and the agent's
//! `run_command` alike, in this order: classify (the action policy) → rules (the rules files)
//! → approval (a person, where the decision asks) → network (as configured, or given by a
//! person's approval of a command held back for it) → checkpoint (every command that may
//! write work is checkpointed first, and a checkpoint that cannot be saved stops it) →
//! sandbox → audit ([`super::CommandEvent`]). Callers supply what differs: how a person is asked, how a
//! checkpoint is saved, the sandbox spec, where the audit event goes.

use super::{
    ActionClass, ActionPolicy, ApprovalPolicy, CommandVerdict, Decision, ExecRules, PolicyContext,
    RuledDecision, SandboxMode,
};

/// How a person is asked about a command the decision holds back.
pub trait ApprovalAsker {
    /// The answer about `text`, held back for `reason`. `Err` is a failure to record or ask
    /// (not a refusal), and stops the caller.
    fn ask(&mut self, text: &str, verdict: &CommandVerdict, reason: &str) -> Result<Approval, String>;
}

/// How a command's decision was settled.
#[derive(Debug, Clone, PartialEq)]
pub struct Approval {
    /// `Allow`, or `Deny` with the reason the caller shows.
    pub decision: Decision,
    /// `policy`, the rule that decided, or who answered.
    pub decided_by: String,
    /// What a person who denied the command said.
    pub person_reason: Option<String>,
    /// A person stopped the whole run, not just this command.
    pub aborted: bool,
}

impl Approval {
    pub fn allowed(decided_by: &str) -> Approval {
        Approval {
            decision: Decision::Allow,
            decided_by: decided_by.to_string(),
            person_reason: None,
            aborted: false,
        }
    }

    pub fn denied(reason: String, decided_by: &str) -> Approval {
        Approval {
            decision: Decision::Deny { reason },
            decided_by: decided_by.to_string(),
            person_reason: None,
            aborted: false,
        }
    }

    pub fn is_allowed(&self) -> bool {
        self.decision == Decision::Allow
    }
}

/// A command judged by the policy and the rules.
#[derive(Debug, Clone)]
pub struct JudgedCommand {
    pub text: String,
    pub verdict: CommandVerdict,
    pub ruled: RuledDecision,
}

/// The gate's settings for one workspace.
pub struct CommandGate<'a> {
    pub rules: &'a ExecRules,
    pub approval: ApprovalPolicy,
    pub mode: SandboxMode,
    pub context: PolicyContext,
}

impl CommandGate<'_> {
    /// Classify, then the rules.
    pub fn judge(&self, text: &str) -> JudgedCommand {
        let verdict = ActionPolicy::classify(text, &self.context);
        let ruled = self
            .rules
            .decide(&verdict, self.approval, self.mode, &self.context);
        JudgedCommand {
            text: text.to_string(),
            verdict,
            ruled,
        }
    }

    /// The approval: the policy's or a rule's decision, or, where it asks, the person's.
    pub fn approve(&self, judged: &JudgedCommand, asker: &mut dyn ApprovalAsker) -> Result<Approval, String> {
        Ok(match &judged.ruled.decision {
            Decision::Allow => Approval::allowed(&judged.ruled.decided_by),
            Decision::Deny { reason } => Approval::denied(reason.clone(), &judged.ruled.decided_by),
            Decision::Ask { reason } => asker.ask(&judged.text, &judged.verdict, reason)?,
        })
    }

    /// Whether the command gets the network: as configured, or because a person approved a
    /// command the policy held back for needing it.
    pub fn network(&self, judged: &JudgedCommand, approval: &Approval) -> bool {
        self.context.network
            || (approval.is_allowed()
                && matches!(judged.ruled.decision, Decision::Ask { .. })
                && judged
                    .verdict
                    .parts
                    .iter()
                    .any(|p| p.class == ActionClass::Network))
    }

    /// The checkpoint rule: a command that may write work is checkpointed by `save` first
    /// (`Ok(Some(commit))`), one known to write nothing is not (`Ok(None)`), and one whose
    /// checkpoint cannot be saved does not run (`Err`, the message to show).
    pub fn checkpoint<E: std::fmt::Display>(
        judged: &JudgedCommand,
        save: impl FnOnce() -> Result<String, E>,
    ) -> Result<Option<String>, String> {
        if !judged.verdict.may_write() {
            return Ok(None);
        }
        save()
            .map(Some)
            .map_err(|e| format!("not run: the checkpoint to undo it could not be saved: {e:#}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Answer(Option<Approval>, usize);

    impl ApprovalAsker for Answer {
        fn ask(&mut self, _: &str, _: &CommandVerdict, reason: &str) -> Result<Approval, String> {
            self.1 += 1;
            self.0.clone().ok_or_else(|| format!("cannot ask: {reason}"))
        }
    }

    fn gate(rules: &ExecRules, network: bool) -> CommandGate<'_> {
        CommandGate {
            rules,
            approval: ApprovalPolicy::OnRequest,
            mode: SandboxMode::WorkspaceWrite,
            context: PolicyContext {
                branch: None,
                network,
                paths: None,
            },
        }
    }

    #[test]
    fn a_read_only_command_is_allowed_without_asking_or_a_checkpoint() {
        let rules = ExecRules::default();
        let g = gate(&rules, false);
        let judged = g.judge("ls -la");
        let mut asker = Answer(None, 0);
        let approval = g.approve(&judged, &mut asker).unwrap();
        assert!(approval.is_allowed(), "{approval:?}");
        assert_eq!(asker.1, 0, "no one was asked");
        let saved = CommandGate::checkpoint(&judged, || -> Result<String, String> { panic!("saved") });
        assert_eq!(saved, Ok(None));
    }

    #[test]
    fn a_command_that_may_write_is_checkpointed_and_stopped_when_that_fails() {
        let rules = ExecRules::default();
        let g = gate(&rules, false);
        let judged = g.judge("python3 -c 'open(\"x\",\"w\")'");
        assert_eq!(
            CommandGate::checkpoint(&judged, || Ok::<_, String>("c0ffee".into())),
            Ok(Some("c0ffee".into()))
        );
        let failed = CommandGate::checkpoint(&judged, || Err("disk full"));
        assert_eq!(
            failed,
            Err("not run: the checkpoint to undo it could not be saved: disk full".to_string())
        );
    }

    #[test]
    fn a_person_approving_a_network_command_gives_it_the_network() {
        let rules = ExecRules::default();
        let g = gate(&rules, false);
        let judged = g.judge("curl https://example.com");
        assert!(
            matches!(judged.ruled.decision, Decision::Ask { .. }),
            "{:?}",
            judged.ruled
        );
        let mut yes = Answer(Some(Approval::allowed("a person, once")), 0);
        let approval = g.approve(&judged, &mut yes).unwrap();
        assert!(g.network(&judged, &approval));
        let mut no = Answer(Some(Approval::denied("no".into(), "a person")), 0);
        let approval = g.approve(&judged, &mut no).unwrap();
        assert!(!g.network(&judged, &approval));
    }
}
