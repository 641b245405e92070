"""The guest's side of a room: the page a customer opens from the join link, and its websocket."""
