"""Images and audio through the binding (run by tests/e2e/test_python_media.sh):
chat with an image part or an audio part gives the server's answer on the
same files; transcribe gives `pocketllm transcribe`'s transcript."""
import base64
import json

import pytest

import pocketllm
from conftest import _env, post, run_cli


def image_msgs(url):
    return [{"role": "user", "content": [{"type": "text", "text": "What is in the picture?"},
                                         {"type": "image_url", "image_url": {"url": url}},
                                         {"type": "text", "text": "Answer briefly."}]}]


def test_chat_with_image_equals_server():
    vl, mm, server, image = (_env(k) for k in ("PL_PY_VL", "PL_PY_VL_MM", "PL_PY_VL_SERVER", "PL_PY_IMAGE"))
    url = "data:image/png;base64," + base64.b64encode(open(image, "rb").read()).decode()
    req = {"max_tokens": 16, "temperature": 0}
    want = post(server, "/v1/chat/completions", dict(req, model="m", messages=image_msgs(url)))["choices"][0]
    with pocketllm.Model(vl, n_ctx=512, n_threads=1, mmproj=mm, image_max_tokens=16) as m:
        assert m.has_vision and not m.has_audio
        got = m.chat(image_msgs(url), **req)["choices"][0]
        assert got["message"]["content"], got  # (the random model writes something)
        assert got["message"] == want["message"] and got["finish_reason"] == want["finish_reason"]
        # a path (plain or file://) is the same image
        assert m.chat(image_msgs(image), **req)["choices"][0]["message"] == want["message"]
        assert m.chat(image_msgs("file://" + image), **req)["choices"][0]["message"] == want["message"]
        with pytest.raises(pocketllm.Error):
            m.chat(image_msgs("data:image/png;base64," + base64.b64encode(b"not an image").decode()), **req)
        with pytest.raises(pocketllm.InvalidArgumentError):
            m.chat(image_msgs("https://example.com/a.png"), **req)
        with pytest.raises(pocketllm.InvalidArgumentError):  # a vision tower only
            m.chat([{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "", "format": "wav"}}]}])


def test_chat_with_audio_equals_server():
    asr, mm, server, audio = (_env(k) for k in ("PL_PY_ASR", "PL_PY_ASR_MM", "PL_PY_ASR_SERVER", "PL_PY_AUDIO"))
    data = base64.b64encode(open(audio, "rb").read()).decode()
    msgs = [{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": data, "format": "wav"}},
                                         {"type": "text", "text": "Transcribe it."}]}]
    req = {"max_tokens": 12, "temperature": 0}
    want = post(server, "/v1/chat/completions", dict(req, model="m", messages=msgs))["choices"][0]
    with pocketllm.Model(asr, n_ctx=1024, n_threads=1, mmproj=mm) as m:
        assert m.has_audio
        got = m.chat(msgs, **req)["choices"][0]
        assert got["message"]["content"], got
        assert got["message"] == want["message"] and got["finish_reason"] == want["finish_reason"]


def test_transcribe_equals_cli():
    asr, mm, audio, cli = (_env(k) for k in ("PL_PY_ASR", "PL_PY_ASR_MM", "PL_PY_AUDIO", "PL_BIN"))
    want = json.loads(run_cli(cli, "transcribe", "--model", asr, "--mmproj", mm, "-t", "1", "--json",
                              "--language", "English", audio))
    with pocketllm.Model(asr, n_threads=1, mmproj=mm) as m:
        seen = []
        got = m.transcribe(audio, language="English", progress=lambda d, t: seen.append((d, t)))
        # (the random model's words may all be special tokens, which a
        # transcript leaves out: the token counts are what must be non-zero)
        assert got["n_tokens"] > 0 and got["text"] == want["text"] and got["language"] == want["language"]
        assert got["n_tokens"] == want["tokens"] and got["n_cut"] == want["cut_pieces"]
        assert [s["text"] for s in got["segments"]] == [s["text"] for s in want["segments"]]
        assert seen
        assert m.transcribe(open(audio, "rb").read(), language="English")["text"] == want["text"]
        with pytest.raises(pocketllm.Error):
            m.transcribe(b"this is not audio")
        with pytest.raises(pocketllm.FileError):
            m.transcribe("/nonexistent/clip.wav")
