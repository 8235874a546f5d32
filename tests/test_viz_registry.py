from dbxray.viz.registry import VIEW_CLASSES, VIEW_ERRORS, view_classes


def test_every_registered_view_loads_and_follows_the_protocol(qapp):
    classes = view_classes()
    assert VIEW_ERRORS == []
    assert len(classes) == len(VIEW_CLASSES)
    ids = [c.view_id for c in classes]
    assert len(set(ids)) == len(ids)
    for cls in classes:
        assert isinstance(cls.title, str) and hasattr(cls, "set_dataset")
