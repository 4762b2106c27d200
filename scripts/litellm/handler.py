"""A scripted model behind LiteLLM's proxy, as a LiteLLM custom handler.

It plays a three-step native task — read notes.txt, write out.txt, attempt_completion — with
streamed tool calls whose JSON arguments arrive in fragments, and checks each request the way
the real APIs do: Cline's yolo-mode tool definitions are there, and every tool call in the history is
answered by a tool message with its id. A broken request gets a 400 naming the problem.
"""

import json

import litellm
from litellm import CustomLLM
from litellm.llms.custom_llm import CustomLLMError


# The runs are --yolo, and Cline offers no ask_followup_question in yolo mode (its tool spec's
# contextRequirements is !yoloModeToggled): nobody is there to answer.
_GPT5_TOOLS = sorted(["apply_patch", "attempt_completion", "execute_command",
                      "list_files", "read_file", "search_files"])
_CLAUDE_TOOLS = sorted(["attempt_completion", "execute_command", "list_files",
                        "read_file", "replace_in_file", "search_files", "write_to_file"])


def _check(messages, optional_params):
    tools = optional_params.get("tools") or []
    names = sorted(t["function"]["name"] for t in tools)
    # Cline's native tool sets in yolo mode: the seven of its next-gen variant (Claude), the six of
    # its GPT-5 variants (apply_patch for write_to_file and replace_in_file).
    expected = [_CLAUDE_TOOLS, _GPT5_TOOLS]
    if names not in expected:
        raise CustomLLMError(status_code=400, message=f"expected one of Cline's native tool sets, got {names}")
    for i, m in enumerate(messages):
        calls = m.get("tool_calls") or []
        if m.get("role") == "assistant" and calls:
            ids = [c["id"] for c in calls]
            answered = []
            for n in messages[i + 1:]:
                if n.get("role") != "tool":
                    break
                answered.append(n.get("tool_call_id"))
            if answered != ids:
                raise CustomLLMError(status_code=400, message=f"tool calls {ids} answered by {answered}")


def _last_tool_result(messages):
    for m in reversed(messages):
        if m.get("role") == "tool":
            content = m.get("content")
            if isinstance(content, list):
                content = "".join(p.get("text", "") for p in content)
            return content or ""
    return None


def _chunk(text="", tool=None, finish=""):
    return {
        "text": text,
        "tool_use": tool,
        "is_finished": bool(finish),
        "finish_reason": finish,
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60} if finish else None,
        "index": 0,
    }


def _call(call_id, name, fragments):
    first = True
    for f in fragments:
        yield _chunk(tool={
            "id": call_id if first else None,
            "type": "function",
            "function": {"name": name if first else None, "arguments": f},
            "index": 0,
        })
        first = False


def _script(messages, optional_params):
    names = [t["function"]["name"] for t in optional_params.get("tools") or []]
    last = _last_tool_result(messages)
    if last is None:
        yield _chunk(text="Reading the notes. ")
        yield from _call("call_lite_1", "read_file", ['{"pa', 'th": "notes', '.txt"}'])
    elif "[read_file for 'notes.txt'] Result:" in last and "remember the milk" in last:
        if "apply_patch" in names:
            patch = "*** Begin Patch\n*** Add File: out.txt\n+milk \u2713\n*** End Patch"
            content = json.dumps({"input": patch})
            yield from _call("call_lite_2", "apply_patch", [content[:17], content[17:31], content[31:]])
        else:
            content = json.dumps({"absolutePath": "out.txt", "content": "milk \u2713\n"})
            yield from _call("call_lite_2", "write_to_file", [content[:17], content[17:31], content[31:]])
    elif "[write_to_file for 'out.txt'] Result:" in last or "[apply_patch" in last:
        yield from _call("call_lite_3", "attempt_completion", ['{"result": "copied via LiteLLM"}'])
    else:
        raise CustomLLMError(status_code=400, message=f"unexpected tool result: {last[:200]!r}")
    yield _chunk(finish="tool_calls")


class Scripted(CustomLLM):
    def completion(self, *args, **kwargs):
        raise CustomLLMError(status_code=400, message="agent-min always streams")

    def streaming(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,
                  encoding, api_key, logging_obj, optional_params, *args, **kwargs):
        _check(messages, optional_params)
        yield from _script(messages, optional_params)

    async def astreaming(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,
                         encoding, api_key, logging_obj, optional_params, *args, **kwargs):
        _check(messages, optional_params)
        for c in _script(messages, optional_params):
            yield c


scripted = Scripted()
