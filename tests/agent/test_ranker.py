"""The keyword ranker finds the tool a person means: names, keywords, typos, MCP names, ties."""

from __future__ import annotations

import pytest

from agent.search.ranker import KeywordRanker, RankerParams, ScoredDoc, SearchDoc
from agent.search.text import split_identifier, stem
from catalog import ROWS


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path, monkeypatch):
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))


@pytest.fixture(scope="module")
def ours() -> KeywordRanker:
    return KeywordRanker([SearchDoc(row.name, row.description, row.keywords) for row in ROWS])


def names(ranker: KeywordRanker, query: str, limit: int = 5) -> list[str]:
    return [hit.name for hit in ranker.rank(query, limit=limit)]


def test_typo_still_finds_export_csv(ours):
    assert "exportCsv" in names(ours, "exprot csv", limit=3)
    assert names(ours, "exprot to csv")[0] == "exportCsv"


def test_camel_case_name_words_rank_the_tool_first(ours):
    assert names(ours, "index stats")[0] == "getIndexStats"


def test_query_written_as_the_identifier_finds_it(ours):
    assert names(ours, "exportCsv")[0] == "exportCsv"
    assert names(ours, "export_csv")[0] == "exportCsv"
    assert names(ours, "getitem")[0] == "getItem"


def test_a_word_only_in_keywords_finds_the_tool():
    docs = [
        SearchDoc("alpha", "Does the first thing."),
        SearchDoc("beta", "Does the second thing.", ("spreadsheet",)),
        SearchDoc("gamma", "Does the third thing."),
    ]
    assert names(KeywordRanker(docs), "spreadsheet") == ["beta"]


def test_identical_docs_tie_and_keep_catalog_order():
    docs = [SearchDoc("send_email", "Send an email."), SearchDoc("email_send", "Send an email.")]
    hits = KeywordRanker(docs).rank("email")
    assert [hit.name for hit in hits] == ["send_email", "email_send"]
    assert hits[0].score == hits[1].score
    assert [hit.index for hit in hits] == [0, 1]


def test_ranking_is_deterministic_across_builds():
    docs = [
        SearchDoc(f"tool{i}", f"Handles record kind {i % 7} for the archive.") for i in range(60)
    ]
    first = KeywordRanker(docs).rank("archive record", limit=10)
    second = KeywordRanker(list(docs)).rank("archive record", limit=10)
    assert first == second
    assert KeywordRanker(docs).rank("archive record", limit=10) == first


def test_mcp_server_prefixed_names_are_split():
    docs = [
        SearchDoc("github__create_issue", "Open a new issue in a repository."),
        SearchDoc("github__list_pull_requests", "List pull requests of a repository."),
        SearchDoc("slack__post_message", "Post a message to a channel."),
    ]
    ranker = KeywordRanker(docs)
    assert names(ranker, "create github issue")[0] == "github__create_issue"
    assert names(ranker, "pull requests")[0] == "github__list_pull_requests"
    assert names(ranker, "slack message")[0] == "slack__post_message"


@pytest.mark.parametrize("query", ["", "   ", "!!! ???", "the of and", "12345", "\x00\n\t"])
def test_empty_or_garbage_query_returns_nothing(ours, query):
    assert ours.rank(query) == []


def test_unmatched_query_returns_nothing(ours):
    assert ours.rank("xyzzy plugh") == []


def test_only_positive_scores_and_at_most_limit(ours):
    hits = ours.rank("table", limit=3)
    assert 0 < len(hits) <= 3
    assert all(isinstance(hit, ScoredDoc) and hit.score > 0 for hit in hits)
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert ours.rank("table", limit=0) == []


def test_empty_catalog_ranks_nothing():
    assert KeywordRanker([]).rank("anything") == []


def test_general_abbreviation_expands():
    docs = [SearchDoc("dropRecord", "Delete a record."), SearchDoc("readRecord", "Read a record.")]
    assert names(KeywordRanker(docs), "del record")[0] == "dropRecord"


def test_stemming_matches_word_forms():
    docs = [
        SearchDoc("calc", "Calculates monthly payments."),
        SearchDoc("other", "Paints a fence."),
    ]
    assert names(KeywordRanker(docs), "calculation of payment") == ["calc"]
    assert stem("calculations") == stem("calculate") == "calcul"
    assert stem("news") != stem("new")


def test_identifier_splitting():
    assert split_identifier("getHTTPStatus2") == ["get", "http", "status", "2"]
    assert split_identifier("server__tool-name.v2") == ["server", "tool", "name", "v", "2"]


def test_phrase_order_breaks_a_near_tie():
    docs = [
        SearchDoc("b", "Report the rows of one table and count the total."),
        SearchDoc("a", "Count the rows of one table and report the total."),
    ]
    assert names(KeywordRanker(docs), "count rows") == ["a", "b"]


def test_everyday_words_reach_tools_that_use_other_words():
    docs = [
        SearchDoc("get_weather_forecast", "Temperature and precipitation forecast for a city."),
        SearchDoc("convert_currency", "Convert an amount between currencies at the exchange rate."),
        SearchDoc("find_movies", "Search movies by actor or title."),
        SearchDoc("lawsuit_search", "Find lawsuits filed against a company."),
    ]
    ranker = KeywordRanker(docs)
    assert names(ranker, "will it rain in Oslo tomorrow")[0] == "get_weather_forecast"
    assert names(ranker, "turn 300 pounds into yen")[0] == "convert_currency"
    assert names(ranker, "films with Tom Hanks")[0] == "find_movies"
    assert names(ranker, "has anyone sued Acme")[0] == "lawsuit_search"


def test_exact_word_beats_a_synonym():
    docs = [SearchDoc("removeRow", "Remove a row."), SearchDoc("deleteRow", "Delete a row.")]
    hits = KeywordRanker(docs).rank("delete row")
    assert [hit.name for hit in hits] == ["deleteRow", "removeRow"]
    assert hits[0].score > hits[1].score


def test_typo_matching_keeps_the_first_letter():
    docs = [SearchDoc("semantic", "Search by meaning rather than exact words.")]
    assert KeywordRanker(docs).rank("weather") == []
    assert names(KeywordRanker(docs), "meanign") == ["semantic"]


def test_unknown_word_matches_catalog_words_it_starts():
    docs = [SearchDoc("stats", "Statistics of an index."), SearchDoc("other", "Something else.")]
    assert names(KeywordRanker(docs), "statis") == ["stats"]


def test_a_pasted_wall_of_text_is_cut_to_its_first_words():
    docs = [SearchDoc("exportCsv", "Write rows to a CSV file."), SearchDoc("other", "Zebra.")]
    ranker = KeywordRanker(docs)
    letters = "abcdefghijklmnopqrstuvwxyz"
    filler = " ".join(
        "q" + letters[i % 26] + letters[i // 26 % 26] + letters[i // 676 % 26] for i in range(5000)
    )
    assert names(ranker, "export csv " + filler)[0] == "exportCsv"
    assert ranker.rank(filler + " zebra") == []


def test_words_near_in_meaning_reach_a_tool_through_the_neighbour_table():
    docs = [
        SearchDoc("computer_specs", "Hardware details of a computer."),
        SearchDoc("city_forecast", "Forecast for a city."),
    ]
    assert names(KeywordRanker(docs), "how much memory does my laptop have") == ["computer_specs"]
    without = KeywordRanker(docs, RankerParams(neighbour=0.0, vector=0.0))
    assert names(without, "how much memory does my laptop have") == []


def test_a_neighbour_never_outranks_the_exact_word():
    docs = [SearchDoc("find_cab", "Book a cab."), SearchDoc("find_taxi", "Book a taxi.")]
    hits = KeywordRanker(docs).rank("taxi")
    assert [hit.name for hit in hits] == ["find_taxi", "find_cab"]
    assert hits[0].score > hits[1].score


def test_without_the_neighbour_table_the_ranker_still_ranks(monkeypatch, tmp_path):
    from agent.search import ranker as ranker_module

    monkeypatch.setattr(ranker_module, "NEIGHBOURS_FILE", tmp_path / "missing.json")
    ranker_module.neighbours.cache_clear()
    try:
        docs = [SearchDoc("exportCsv", "Write rows to a CSV file."), SearchDoc("other", "Zebra.")]
        assert names(KeywordRanker(docs), "export csv") == ["exportCsv"]
    finally:
        ranker_module.neighbours.cache_clear()


def test_a_corrupt_neighbour_table_is_ignored(monkeypatch, tmp_path):
    from agent.search import ranker as ranker_module

    broken = tmp_path / "neighbours.json"
    broken.write_text("{not json", encoding="utf-8")
    monkeypatch.setattr(ranker_module, "NEIGHBOURS_FILE", broken)
    ranker_module.neighbours.cache_clear()
    try:
        assert ranker_module.neighbours() == {}
        docs = [SearchDoc("exportCsv", "Write rows to a CSV file.")]
        assert names(KeywordRanker(docs), "csv") == ["exportCsv"]
    finally:
        ranker_module.neighbours.cache_clear()


WORLD = [
    SearchDoc("surf_report", "Today's surf report for any break in Australia."),
    SearchDoc("city_weather", "Weather for a city."),
    SearchDoc("stock_quote", "Latest price of a stock."),
    SearchDoc("recipe_finder", "Recipes by ingredient."),
]


def test_a_request_sharing_no_word_with_a_tool_reaches_it_through_the_word_vectors():
    # No word, synonym, related word or neighbour links these requests to their tools; the
    # static word vectors (wordvectors.bin) do.
    only_vectors = RankerParams(neighbour=0.0)
    no_vectors = RankerParams(neighbour=0.0, vector=0.0)
    for query, tool in [
        ("how big are the waves at the beach", "surf_report"),
        ("what to make for dinner with eggs", "recipe_finder"),
        ("bring an umbrella in london", "city_weather"),
    ]:
        assert names(KeywordRanker(WORLD, no_vectors), query) == []
        assert names(KeywordRanker(WORLD, only_vectors), query)[0] == tool
        assert names(KeywordRanker(WORLD), query)[0] == tool


def test_word_vectors_give_nothing_to_unrelated_tools():
    hits = KeywordRanker(WORLD).rank("how big are the waves at the beach")
    assert "stock_quote" not in [hit.name for hit in hits]
    assert "recipe_finder" not in [hit.name for hit in hits]


def test_without_the_word_vector_table_the_ranker_still_ranks(monkeypatch, tmp_path):
    from agent.search import word_vectors

    monkeypatch.setattr(word_vectors, "VECTORS_FILE", tmp_path / "missing.bin")
    word_vectors.word_vectors.cache_clear()
    try:
        assert names(KeywordRanker(WORLD), "latest stock price") == ["stock_quote"]
        assert names(KeywordRanker(WORLD), "how big are the waves at the beach") == ["surf_report"]
    finally:
        word_vectors.word_vectors.cache_clear()


def test_a_real_word_is_not_taken_for_a_typo_of_a_catalog_word():
    docs = [*WORLD, SearchDoc("play_audio", "Play a wav or mp3 file.")]
    assert "play_audio" not in names(KeywordRanker(docs), "wave")
    assert names(KeywordRanker(docs), "play a wva file")[0] == "play_audio"  # a typo still is


def test_vectors_may_order_tools_without_vouching_for_them():
    # The word vectors put the surf report first, but only words vouch for how well anything
    # fits when the vector channel vouches for nothing: the best score is the words' best.
    query = "latest waves in australia"
    vouching = KeywordRanker(WORLD)
    never = KeywordRanker(WORLD, RankerParams(vector_min_cosine=1.01))
    words_only = KeywordRanker(WORLD, RankerParams(vector=0.0, general=0.0))
    assert names(words_only, query)[0] == "stock_quote"
    assert names(vouching, query) == names(never, query) == ["surf_report", "stock_quote"]
    assert never.rank(query)[0].score == pytest.approx(words_only.rank(query)[0].score)
    assert vouching.rank(query)[0].score > never.rank(query)[0].score


def test_general_vectors_reorder_but_never_make_a_request_look_answered():
    # The general-English table puts the company's figures nearest to a request about a
    # firm's liabilities, but it vouches for nothing: no word, neighbour or software-table
    # vector vouches either, so search says nothing fits rather than guess.
    docs = [
        *WORLD,
        SearchDoc("company_facts", "Financial statements and key figures of listed firms."),
    ]
    ranker = KeywordRanker(docs)
    request = "What are the liabilities of GlaxoSmithKline?"
    general = ranker._general_vectors
    assert general is not None
    standing = general.standing(request.split(), ranker.params.general_floor - 0.5)
    assert [docs[index].name for index, _, _ in standing] == ["company_facts"]
    assert names(ranker, request) == []


def test_without_the_general_table_the_ranker_still_ranks(monkeypatch, tmp_path):
    from agent.search import word_vectors

    monkeypatch.setattr(word_vectors, "GENERAL_FILE", tmp_path / "missing.bin")
    word_vectors.general_vectors.cache_clear()
    try:
        assert names(KeywordRanker(WORLD), "latest stock price") == ["stock_quote"]
        assert names(KeywordRanker(WORLD), "how big are the waves at the beach") == ["surf_report"]
    finally:
        word_vectors.general_vectors.cache_clear()
