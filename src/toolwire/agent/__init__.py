"""The agent loop and what it drives: run state, dispatch, structured output, resume, run log.

``loop`` holds `Agent`; ``run`` the values of one run (`RunStop`, `Step`, `RunResult`,
`AgentRun`, `RunState`, whose ``emit`` is the run's one event channel); ``output`` the
structured-output tool; ``resume`` starting a run and resuming one from its log; ``dispatch``
looks tools up, checks, approves and runs them; ``runlog`` writes (as one of a run's listeners)
and reads the JSONL run log. Talks to a model only through `toolwire.protocol.Model`: never
imports codecs' wire modules, the transport or the client. Nothing is re-exported here.
"""
