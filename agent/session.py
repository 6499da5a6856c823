"""A chat session: one conversation against one store, run turn by turn (TUI and headless).

`run_turn` blocks; front ends call it on a worker thread and receive TurnEvents through
`on_event` on that thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent import paths
from agent.active_set import ActiveSet
from agent.attachments import Attachment, AttachmentSet
from agent.availability import met_requirements
from agent.bedrock.caching import CachePointMemory
from agent.bedrock.models import (
    DEFAULT_ALIAS,
    alias_of,
    check_model,
    configured_region,
    resolve_model,
    resumed_model,
)
from agent.caller import ModelCaller
from agent.config import Settings
from agent.conversations import (
    Conversation,
    ConversationStore,
    ConversationSummary,
    new_conversation_id,
)
from agent.errors import StoreError, TabletalkError
from agent.events import Notice, TurnEnded, TurnEvent, Usage
from agent.loop import TurnRecord, TurnRunner
from agent.permissions import AuditLog, PermissionGate, Prompter, grants_of
from agent.prompt import system_prompt
from agent.search.decider import Decider
from agent.search.searcher import ToolSearcher
from agent.specs import SpecBook
from agent.staging import StagingArea
from agent.stop import reads_stop_when
from agent.stores.base import Store
from agent.stores.open import identity_db, same_db
from agent.text_plural import counted
from agent.tools.context import ToolContext
from agent.toolset import Toolset
from agent.transcript import ATTACHED_PREFIX, display_items
from agent.ui_port import HeadlessUi, UiPort

if TYPE_CHECKING:
    from agent.bedrock.converse import BedrockCaller
    from agent.mcp_client.sources import McpSources


def build_toolset(settings: Settings, sources: McpSources | None = None) -> Toolset:
    """The effective catalog: built-in rows, external MCP tools, the user's overrides."""
    return Toolset.build(
        settings.tools.always_loaded,
        settings.tools.discoverable,
        sources.external_tools() if sources else (),
    )


def start_mcp_sources(settings: Settings, warn: Callable[[str], None]) -> McpSources | None:
    """Connect to the configured MCP servers (blocking, bounded); None when there are none."""
    if not settings.mcp_servers:
        return None
    from agent.mcp_client.sources import McpSources  # the SDK is slow to import: only if used

    return McpSources.start(settings.mcp_servers, warn)


def conversation_db(conversation_id: str | None, db: str | None, *, explicit: bool) -> str | None:
    """The database a run should open: a continued conversation keeps its own store.

    An explicit `--db` that differs from the conversation's store is refused, so a chat
    about one file never stages edits against another.
    """
    if not conversation_id:
        return db
    conversation = ConversationStore().load(conversation_id)
    own = identity_db(conversation.store)
    if own is None:
        return db
    if explicit and db and not same_db(db, own):
        raise TabletalkError(
            f"Conversation {conversation_id} belongs to {own}, not {db}.",
            fix=f"Leave out --db (or pass --db {own}), or start a new conversation.",
        )
    return own


def session_model(settings: Settings) -> tuple[str | None, str]:
    """(region, model id) for a session: the configured region (None when there is none) and
    the model setting resolved for it; with no `model` set, the default alias resolves per
    region (the field's default value names only its US profile)."""
    region = configured_region(settings.profile, settings.region)
    name = settings.model if "model" in settings.model_fields_set else DEFAULT_ALIAS
    return region, resolve_model(name, region)


def model_label(model_id: str) -> str:
    """`haiku-4.5 (us.anthropic.claude-haiku-4-5-20251001-v1:0)`, or the id alone when it is
    not a model we know by alias."""
    alias = alias_of(model_id)
    return f"{alias} ({model_id})" if alias else model_id


def list_conversations() -> list[ConversationSummary]:
    """Saved conversations, newest first."""
    return ConversationStore().list()


class ChatSession:
    """Holds the conversation, its active set and permissions; runs turns."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        conversation: Conversation,
        *,
        ui: UiPort | None = None,
        prompter: Prompter | None = None,
        toolset: Toolset | None = None,
        conversations: ConversationStore | None = None,
        caller: ModelCaller | None = None,
        use_saved_model: bool = False,
    ) -> None:
        """`caller` replaces the Bedrock caller (tests, benchmarks); by default one is made
        from the settings' profile, region, model and streaming choice. `use_saved_model`:
        continue on the model the conversation records (when the region can call it) rather
        than the settings' one; `model_notice` then says so."""
        self.settings = settings
        self.store = store
        self.conversation = conversation
        self.ui = ui or HeadlessUi()
        self.conversations = conversations or ConversationStore()
        self._all_tools = toolset or Toolset.build(
            settings.tools.always_loaded, settings.tools.discoverable
        )
        self._met = met_requirements(store)
        self._offer(self._all_tools.named(conversation.discovered))
        self.gate = PermissionGate(
            settings.mode, prompter, AuditLog(), grants_of(conversation.granted)
        )
        self.staging = StagingArea(store)
        self.specs = SpecBook(paths.data_dir() / "specs.sqlite", store.identity)
        self.attachments = AttachmentSet.from_list(conversation.attachments)
        self.region, model_id = session_model(settings)
        self.model_notice: str | None = None
        """A sentence for the front end when the session runs on another model than the
        settings name (a resumed chat continuing on its own model), else None."""
        if use_saved_model:
            model_id, self.model_notice = self._saved_model(model_id)
        self.model_id = model_id
        self._given_caller = caller
        self._caller: BedrockCaller | None = None
        self._caller_key: tuple[str, bool] | None = None
        self._memory = CachePointMemory(paths.state_dir() / "cache_points.json")
        self.last_record: TurnRecord | None = None
        self.last_turn_kept = False
        """Whether the last turn's message stays in the conversation (False: a turn that failed
        before any answer took it back, so the user can send it again as it was)."""
        self._system: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def _saved_model(self, current: str) -> tuple[str, str | None]:
        """(model id, notice) for a resumed conversation: the model it records, or `current`
        when it records none (older files) or one the region cannot call."""
        saved = self.conversation.model.strip()
        resumed = resumed_model(saved, self.region)
        if resumed is None:
            if saved and resumed_model(saved, None) is not None:  # a model id, not callable here
                return current, (
                    f"This chat used {saved}, which {self.region} cannot call; "
                    f"it continues on {model_label(current)}."
                )
            return current, None
        if resumed == current:
            return current, None
        return resumed, f"This chat continues on {model_label(resumed)}, the model it used."

    @property
    def model_id(self) -> str:
        """The model the next turn calls; the conversation records it (saved with it)."""
        return self._model_id

    @model_id.setter
    def model_id(self, value: str) -> None:
        self._model_id = value
        self.conversation.model = value

    def _offer(self, discovered: Iterable[str]) -> None:
        """The toolset, active set (`discovered`: names) and searcher for the requirements
        the store meets now; the conversation keeps only the discoveries still offered."""
        self.toolset = self._all_tools.available(self._met)
        known = [n for n in discovered if self.toolset.row(n) is not None]
        self.active = ActiveSet(self.toolset.inline_names(), known)
        self.conversation.discovered = [self.toolset.identity(n) for n in self.active.discovered]
        self.searcher = ToolSearcher(
            self.toolset,
            self.active,
            decider=Decider.from_settings(self.settings),
            always_loaded=self.settings.tools.always_loaded,
        )

    def refresh_tools(self) -> bool:
        """Re-check which tools the store can serve (an index built or dropped since the
        session opened offers or withdraws vectorSearch); True when that changed. Called
        before each turn, so the next turn's model, search and active set see it."""
        met = met_requirements(self.store)
        if met == self._met:
            return False
        self._met = met
        self._offer(self.active.discovered)
        return True

    @classmethod
    def open(
        cls,
        settings: Settings,
        store: Store,
        *,
        conversation_id: str | None = None,
        ui: UiPort | None = None,
        prompter: Prompter | None = None,
        toolset: Toolset | None = None,
        caller: ModelCaller | None = None,
        use_saved_model: bool = True,
    ) -> ChatSession:
        """Continue a saved conversation (on the model it used, unless `use_saved_model` is
        False: a model given for this run), or start a new one.

        Pass `toolset` (see `build_toolset`) when external MCP servers are running.
        """
        conversations = ConversationStore()
        if conversation_id:
            conversation = conversations.load(conversation_id)
        else:
            conversation = Conversation(
                new_conversation_id(), store.identity, session_model(settings)[1]
            )
        return cls(
            settings,
            store,
            conversation,
            ui=ui,
            prompter=prompter,
            toolset=toolset,
            conversations=conversations,
            caller=caller,
            use_saved_model=use_saved_model and bool(conversation_id),
        )

    @property
    def conversation_id(self) -> str:
        return self.conversation.id

    @property
    def mode(self) -> str:
        return self.gate.mode

    @mode.setter
    def mode(self, value: str) -> None:
        self.gate.mode = value

    @property
    def usage(self) -> Usage:
        return self.conversation.usage

    def attach(self, path: str | Path) -> Attachment:
        """Validate and attach a file to this conversation (raises a TabletalkError)."""
        attachment = self.attachments.add(Path(path))
        self.conversation.attachments = self.attachments.to_list()
        return attachment

    def _model_caller(self, notice: Callable[[str], None]) -> ModelCaller:
        if self._given_caller is not None:
            return self._given_caller
        key = (self.model_id, self.settings.streaming)
        if self._caller is None or self._caller_key != key:
            from agent.bedrock.client import make_client  # boto3 loads here, not at start-up
            from agent.bedrock.converse import BedrockCaller

            # The caller validates each part of a request once (RequestCheck), not the whole
            # history at every step.
            client = make_client(
                self.settings.profile, self.settings.region, parameter_validation=False
            )
            region = client.meta.region_name
            check_model(self.model_id, region)
            self._caller = BedrockCaller(
                client,
                self.model_id,
                streaming=self.settings.streaming,
                memory=self._memory,
                notice=notice,
                profile=self.settings.profile,
                region=region,
            )
            self._caller_key = key
        self._caller.notice = notice
        return self._caller

    def run_turn(
        self,
        text: str,
        *,
        attachments: Iterable[str | Path] = (),
        on_event: Callable[[TurnEvent], None] = lambda event: None,
        cancel: threading.Event | None = None,
    ) -> TurnEnded:
        """Run one turn for the user's text (and files). Blocking; one turn at a time."""
        with self._lock, reads_stop_when((cancel or threading.Event()).is_set):
            self.last_turn_kept = False
            self.refresh_tools()
            try:
                system = self._system_blocks()
            except StoreError:  # Stop while another read held the store's connection
                if cancel is None or not cancel.is_set():
                    raise
                system = self._system  # unused: the turn stops before its first request
            added = [self.attach(path) for path in attachments]
            mark = self.conversation.mark()
            content: list[dict[str, Any]] = [{"text": text}]
            if added:
                message, block = self.conversation.next_user_block()
                self.conversation.attached.append(
                    {
                        "message": message,
                        "block": block,
                        "names": [a.name for a in added],
                        "ids": [a.id for a in added],
                    }
                )
                listing = "; ".join(
                    f"{a.name} (id {a.id}, {a.kind}, {counted(a.size, 'byte')})" for a in added
                )
                content.append(
                    {"text": f"{ATTACHED_PREFIX}{listing}. Read them with readAttachment.]"}
                )
            context = ToolContext(
                store=self.store,
                staging=self.staging,
                ui=self.ui,
                attachments=self.attachments,
                specs=self.specs,
                conversation_id=self.conversation.id,
                origin=f"chat:{self.conversation.id}",
                search=self.searcher,
                aws_profile=self.settings.profile,
                aws_region=self.settings.region,
                gate=self.gate,
            )
            runner = TurnRunner(
                caller=self._model_caller(lambda message: on_event(Notice(message))),
                toolset=self.toolset,
                active=self.active,
                searcher=self.searcher,
                gate=self.gate,
                conversation=self.conversation,
                context=context,
                system=system,
                step_limit=self.settings.step_limit,
                on_event=on_event,
                save=lambda: self._save(on_event),
                flush=self.conversations.flush,
                cancel=cancel,
            )
            self.last_record = runner.record
            try:
                ended = runner.run(content)
            except BaseException as exc:  # e.g. saving failed: an unanswered turn is taken back
                self.last_turn_kept = not self._take_back(mark, text, _raised(exc))
                raise
            failure = (ended.error or "The turn failed.", ended.fix)
            self.last_turn_kept = ended.reason != "error" or not self._take_back(
                mark, text, failure
            )
            return ended

    def _take_back(
        self, mark: tuple[int, int, str, int], text: str, failure: tuple[str, str | None] | None
    ) -> bool:
        """Take back the turn's message if the model never answered it (see `unsend`); the
        conversation keeps a record of it and its `failure` (error, fix) beside the messages,
        so a resumed chat shows it as the live one did (None: nothing to show, e.g. Ctrl+C)."""
        if not self.conversation.unsend(mark):
            return False
        if failure is not None:
            self.conversation.record_failure(text, *failure)
        self._forget_unanswered()
        return True

    def _save(self, on_event: Callable[[TurnEvent], None]) -> None:
        """Save after a step; say so when the chat had to go on under a new id (see
        `ConversationStore.save`)."""
        notice = self.conversations.save(self.conversation)
        if notice:
            on_event(Notice(notice))

    def _system_blocks(self) -> list[dict[str, Any]]:
        """The system prompt for this turn; the previous turn's list when it reads the same,
        so the model caller reuses the request parts it built from it."""
        blocks = system_prompt(self.store.kind, self.store.label, self.store.list_tables())
        if blocks != self._system:
            self._system = blocks
        return self._system

    def _forget_unanswered(self) -> None:
        """A turn failed before any answer: it is not kept (an empty conversation's file goes),
        so failed attempts do not pile up as one-message conversations."""
        try:
            if self.conversation.messages:
                self.conversations.save(self.conversation)
            else:
                self.conversations.delete(self.conversation.id)
        except TabletalkError:  # the turn's own error is the one to report; the file stays
            pass

    def user_messages(self) -> list[tuple[int, str]]:
        """(message index, text) of the user's typed messages, for rewind."""
        return self.conversation.user_text_indexes()

    def files_sent_with(self, message_index: int) -> list[Path]:
        """The files attached to that user message that still exist, so a rewind can put them
        back beside the text it returns. Found by attachment id; a record from before ids
        were kept names its files only, so a name two attachments share is not guessed."""
        paths: list[Path] = []
        for entry in self.conversation.attached:
            if entry["message"] != message_index:
                continue
            ids = entry.get("ids") or []
            by_id = len(ids) == len(entry["names"])
            for wanted in ids if by_id else entry["names"]:
                matches = [a for a in self.attachments if (a.id if by_id else a.name) == wanted]
                if len(matches) == 1 and matches[0].path.is_file():
                    paths.append(matches[0].path)
        return paths

    @property
    def granted_tools(self) -> list[str]:
        """The tools "allow for this chat" lets run without asking (kept with the chat, so
        also after a restart), in the order they were allowed."""
        return list(dict.fromkeys(grant.tool for grant in self.gate.grants))

    def forget_grants(self) -> int:
        """Take back every "allow for this chat" answer (saved at once); returns how many."""
        with self._lock:
            count = len(self.gate.grants)
            self.gate.grants = []
            self.conversation.granted = []
            if count:
                self.conversations.save(self.conversation)
            return count

    def rewind(self, message_index: int) -> str:
        """Roll back to before that user message; return its text for editing. Grants given
        in the removed messages go with them (the user rolled back to before saying yes)."""
        with self._lock:
            text = self.conversation.truncate(message_index)
            self.gate.grants = grants_of(self.conversation.granted)
            self.conversations.save(self.conversation)
            return text

    def display_items(self) -> list[dict[str, Any]]:
        """The conversation as the chat shows it (see `agent.transcript`)."""
        conversation = self.conversation
        return display_items(
            conversation.messages, conversation.attached, conversation.denied, conversation.failed
        )


def _raised(exc: BaseException) -> tuple[str, str | None] | None:
    """What the chat says of a turn that raised before any answer (as the app's
    `turn_failed` does): the error and its fix; None for an interrupt (Ctrl+C, exit)."""
    if not isinstance(exc, Exception):
        return None
    message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    fix = getattr(exc, "fix", None)
    return f"The message was not sent: {message}", fix if isinstance(fix, str) else None
