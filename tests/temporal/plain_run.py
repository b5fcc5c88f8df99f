"""The test agent run in process, with no Temporal: ``python plain_run.py`` prints its answer."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

import durable_agent

if __name__ == "__main__":
    result = durable_agent.build().invoke({"messages": [HumanMessage("hello")]})
    print(result["messages"][-1].content)
