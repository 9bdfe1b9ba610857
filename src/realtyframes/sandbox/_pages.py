"""The HTML pages of the OAuth flow: the consent screen and the refusal page.

>>> "Authorization error" in error_page("scope", "unknown scope 'x'")
True
"""

from __future__ import annotations

import html

from realtyframes.sandbox._auth import USERS, AuthorizeRequest
from realtyframes.sandbox._spec import SCOPE_TEXT

__all__ = ["consent_page", "error_page"]

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; background: #f4f6f8; margin: 0; }}
main {{ max-width: 30rem; margin: 3rem auto; background: #fff; padding: 2rem;
       border-radius: 8px; box-shadow: 0 1px 4px rgba(0,0,0,.15); }}
h1 {{ font-size: 1.3rem; }} .who {{ color: #555; font-size: .9rem; }}
ul {{ padding-left: 1.2rem; }} .actions {{ display: flex; gap: 1rem; margin-top: 1.5rem; }}
button {{ font-size: 1rem; padding: .5rem 1.2rem; border-radius: 4px; border: 1px solid #888; }}
button[value=approve] {{ background: #0b5fff; color: #fff; border-color: #0b5fff; }}
.error {{ color: #a00; }}
</style>
</head>
<body><main>
{body}
</main></body>
</html>
"""


def consent_page(request: AuthorizeRequest, action: str, form_token: str) -> str:
    """The consent screen: app name, requested scopes, a form posting back to /authorize with
    its anti-forgery ``form_token``."""
    e = html.escape
    scopes = "\n".join(
        f"<li><strong>{e(s)}</strong>: {e(SCOPE_TEXT[s])}</li>" for s in request.scopes
    )
    hidden = {
        "client_id": request.client.client_id,
        "redirect_uri": request.redirect_uri,
        "scope": ",".join(request.scopes),
        "response_type": "code",
        "csrf_token": form_token,
    }
    if request.state is not None:
        hidden["state"] = request.state
    if request.code_challenge is not None:
        hidden["code_challenge"] = request.code_challenge
        hidden["code_challenge_method"] = "S256"
    fields = "\n".join(
        f'<input type="hidden" name="{e(k)}" value="{e(v)}">' for k, v in hidden.items()
    )
    body = f"""<p class="who">Signed in as {e(USERS["demo"].email)}</p>
<h1><span class="app">{e(request.client.name)}</span> wants to access your account</h1>
<p>It asks for these permissions:</p>
<ul class="scopes">
{scopes}
</ul>
<p>After your decision you go back to <code>{e(request.redirect_uri)}</code>.</p>
<form method="post" action="{e(action)}">
{fields}
<div class="actions">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>"""
    return _PAGE.format(title=f"Authorize {e(request.client.name)}", body=body)


def error_page(param: str, problem: str) -> str:
    """The 400 page of a refused authorize request (never a redirect)."""
    e = html.escape
    body = f"""<h1>This authorization request cannot be completed</h1>
<p class="error">Invalid or missing parameters: <code>{e(param)}</code>: {e(problem)}</p>
<p>Ask the application's developer to check its OAuth settings.</p>"""
    return _PAGE.format(title="Authorization error", body=body)
