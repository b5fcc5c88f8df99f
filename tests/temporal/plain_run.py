"""The test agent run in process, with no Temporal: ``python plain_run.py`` prints its answer."""

from __future__ import annotations

import durable_agent
from langchain_core.messages import HumanMessage

if __name__ == "__main__":
    result = durable_agent.build().invoke({"messages": [HumanMessage("hello")]})
    print(result["messages"][-1].content)
