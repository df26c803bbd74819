"""Who is asking: the user id under which sessions and model settings are kept.

The user id is `current_user.username` (every session query is filtered by it: users see
only their own chats). One exception: jupyter_server's own identity providers (token or password
login) name no user. They make up a random "Anonymous ..." user per browser cookie, and a
new one for every request that carries only the token (the notebook's kernel), so a kernel
would never see its own sessions again. Those servers have exactly one user, their owner:
requests they authenticate are recorded under `c.GNS3Copilot.owner_user_id`. Any identity
provider that names users itself (JupyterHub's, an LDAP or OAuth one, a test provider)
overrides `get_user`, and its usernames are used as they are.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.identity import IdentityProvider


def names_users(identity_provider: Any) -> bool:
    """Whether the provider identifies users (False: jupyter_server's anonymous token or
    password login)."""
    return type(identity_provider).get_user is not IdentityProvider.get_user


def user_id_for(user: Any, identity_provider: Any, owner_user_id: str) -> str:
    """The user id of an authenticated request (see the module docstring)."""
    if not names_users(identity_provider):
        return owner_user_id
    return str(user.username)
