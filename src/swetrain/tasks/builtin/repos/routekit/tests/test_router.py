import pytest

from routekit import MethodNotAllowed, NotFound, Route, Router, split_path


def make_router():
    r = Router()
    r.add("/", "home", name="home")
    r.add("/users/<int:uid>", "user", name="user")
    r.add("/users/me", "me")
    r.add("/posts/<slug:post>", "post", methods=("GET", "PUT"), name="post")
    r.add("/files/<path>", "file", methods=("POST",))
    return r


def test_split_path_ignores_empty_and_dot():
    assert split_path("//a/./b/") == ["a", "b"]


def test_split_path_dotdot_pops():
    assert split_path("/a/b/../c") == ["a", "c"]


def test_split_path_dotdot_at_root_is_ignored():
    assert split_path("/../a") == ["a"]


def test_split_path_decodes_segments():
    assert split_path("/a%20b/c") == ["a b", "c"]


def test_root_route():
    assert make_router().resolve("GET", "/") == ("home", {})


def test_int_param_is_converted():
    handler, params = make_router().resolve("GET", "/users/42")
    assert handler == "user" and params == {"uid": 42}, f"got {handler}, {params}"


def test_negative_int_param():
    assert make_router().resolve("GET", "/users/-7")[1] == {"uid": -7}


def test_int_rejects_non_digits():
    with pytest.raises(NotFound):
        make_router().resolve("GET", "/users/4x")


def test_lone_minus_is_not_int():
    with pytest.raises(NotFound):
        make_router().resolve("GET", "/users/-")


def test_literal_route_beats_param_route():
    assert make_router().resolve("GET", "/users/me")[0] == "me", "more literal segments must win"


def test_literal_wins_even_if_registered_later():
    r = Router()
    r.add("/a/<x>", "param")
    r.add("/a/b", "literal")
    assert r.resolve("GET", "/a/b")[0] == "literal"


def test_first_registered_wins_on_tie():
    r = Router()
    r.add("/a/<x>", "first")
    r.add("/a/<y>", "second")
    assert r.resolve("GET", "/a/z") == ("first", {"x": "z"})


def test_slug_lowercased():
    assert make_router().resolve("GET", "/posts/Hello-World")[1] == {"post": "hello-world"}


def test_slug_rejects_dots():
    with pytest.raises(NotFound):
        make_router().resolve("GET", "/posts/a.b")


def test_segment_count_must_match():
    with pytest.raises(NotFound):
        make_router().resolve("GET", "/users/1/extra")


def test_method_is_case_insensitive():
    assert make_router().resolve("put", "/posts/x")[0] == "post"


def test_head_falls_back_to_get():
    assert make_router().resolve("HEAD", "/users/3")[0] == "user"


def test_head_does_not_fall_back_to_post():
    with pytest.raises(MethodNotAllowed):
        make_router().resolve("HEAD", "/files/x")


def test_method_not_allowed_lists_methods():
    with pytest.raises(MethodNotAllowed) as info:
        make_router().resolve("DELETE", "/posts/x")
    assert info.value.allowed == ["GET", "PUT"], "allowed methods must be sorted"


def test_not_found():
    with pytest.raises(NotFound):
        make_router().resolve("GET", "/nothing/here")


def test_unknown_converter_rejected():
    with pytest.raises(ValueError, match="unknown converter"):
        Route("/x/<float:v>", None)


def test_duplicate_param_rejected():
    with pytest.raises(ValueError, match="duplicate"):
        Route("/<a>/<int:a>", None)


def test_duplicate_name_rejected():
    r = Router()
    r.add("/a", 1, name="n")
    with pytest.raises(ValueError, match="already registered"):
        r.add("/b", 2, name="n")


def test_static_count():
    assert Route("/a/<x>/b/<int:y>", None).static_count == 2


def test_url_for_fills_params():
    assert make_router().url_for("user", uid=5) == "/users/5"


def test_url_for_root():
    assert make_router().url_for("home") == "/"


def test_url_for_encodes_and_adds_query():
    url = make_router().url_for("post", post="a b", query={"page": 2})
    assert url == "/posts/a%20b?page=2"


def test_url_for_empty_query_no_question_mark():
    assert make_router().url_for("user", uid=1, query={"x": None}) == "/users/1"


def test_url_for_missing_param():
    with pytest.raises(KeyError, match="uid"):
        make_router().url_for("user")


def test_url_for_unknown_name():
    with pytest.raises(KeyError):
        make_router().url_for("nope")
