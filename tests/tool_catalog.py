"""300 generated tools (30 kinds of thing x 10 actions) and requests written for them, in plain
words, each with the tool that serves it: the material of the tool search tests."""

from __future__ import annotations

from typing import Any

from toolwire.schema.tool import Tool

THINGS = [
    ("invoice", "invoices", "billing documents sent to customers"),
    ("calendar_event", "calendar events", "meetings and appointments on the calendar"),
    ("email", "emails", "messages in the mailbox"),
    ("contact", "contacts", "people in the address book"),
    ("github_issue", "GitHub issues", "bug reports in a repository"),
    ("pull_request", "pull requests", "code changes proposed for review"),
    ("file", "files", "documents stored in the drive"),
    ("playlist", "playlists", "lists of songs in the music player"),
    ("order", "orders", "purchases customers made in the shop"),
    ("product", "products", "items in the store catalog"),
    ("ticket", "support tickets", "customer support requests"),
    ("task", "tasks", "to-do items in a project"),
    ("note", "notes", "personal text notes"),
    ("photo", "photos", "pictures in the photo library"),
    ("recipe", "recipes", "cooking recipes"),
    ("flight", "flights", "airline bookings"),
    ("hotel_booking", "hotel bookings", "hotel reservations"),
    ("employee", "employees", "staff records in HR"),
    ("expense", "expenses", "expense reports for reimbursement"),
    ("payment", "payments", "money transfers between accounts"),
    ("subscription", "subscriptions", "recurring monthly plans"),
    ("database_table", "database tables", "tables in the SQL database"),
    ("server", "servers", "virtual machines in the cloud"),
    ("dns_record", "DNS records", "domain name records"),
    ("user_account", "user accounts", "login accounts of the app"),
    ("blog_post", "blog posts", "articles on the blog"),
    ("survey", "surveys", "questionnaires sent to people"),
    ("shipment", "shipments", "parcels being delivered"),
    ("coupon", "coupons", "discount codes for the shop"),
    ("wiki_page", "wiki pages", "pages in the team wiki"),
]

ACTIONS: list[tuple[str, str, dict[str, str]]] = [
    ("create", "Create (add, make, open) a new {one}.", {"title": "Its title"}),
    ("list", "List all {many}, newest first, a page at a time.", {"limit": "How many",
                                                                  "page": "Which page"}),
    ("get", "Get (show, fetch, read) one {one} by its id, with all its details.",
     {"id": "The id"}),
    ("update", "Update (edit, change, rename) an existing {one}.", {"id": "The id",
                                                                   "changes": "New values"}),
    ("delete", "Delete (remove, erase, cancel) a {one} for good.", {"id": "The id"}),
    ("search", "Search (find, look up) {many} by keyword.", {"query": "Words to look for"}),
    ("archive", "Archive a {one}: hide it but keep it stored away.", {"id": "The id"}),
    ("export", "Export (download, save) {many} to a CSV or JSON file.", {"format": "csv or json"}),
    ("share", "Share a {one} with another person by email (send, give access).",
     {"id": "The id", "email": "Who gets it"}),
    ("count", "Count {many}: how many there are, the total number.", {"filter": "Which ones"}),
]

REQUESTS = [
    ("remove the invoice I sent to ACME by mistake", "delete_invoice"),
    ("how many support tickets are still open", "count_ticket"),
    ("put a new meeting on my calendar for Tuesday", "create_calendar_event"),
    ("find emails about the quarterly report", "search_email"),
    ("download all my expense reports as a spreadsheet", "export_expense"),
    ("give Maria access to the lasagna recipe", "share_recipe"),
    ("rename the playlist called Summer", "update_playlist"),
    ("show me the details of order 5512", "get_order"),
    ("hide the old blog post without deleting it", "archive_blog_post"),
    ("list the virtual machines running in the cloud", "list_server"),
    ("add Tom to my address book", "create_contact"),
    ("change the TTL of the DNS record for example.com", "update_dns_record"),
    ("how many employees do we have", "count_employee"),
    ("look up the flights I booked to Lisbon", "search_flight"),
    ("erase the photo from yesterday", "delete_photo"),
    ("email the survey to my manager", "share_survey"),
    ("make a new discount code for Black Friday", "create_coupon"),
    ("where is my parcel? show the shipment", "get_shipment"),
    ("cancel my monthly subscription", "delete_subscription"),
    ("export the database table to CSV", "export_database_table"),
    ("open a bug report about the login crash in the repository", "create_github_issue"),
    ("read pull request 42", "get_pull_request"),
    ("total number of payments this month", "count_payment"),
    ("edit the wiki page about onboarding", "update_wiki_page"),
    ("list my to-do items for the project", "list_task"),
    ("store away the old support ticket", "archive_ticket"),
    ("find hotel reservations in Paris", "search_hotel_booking"),
    ("delete the login account of someone who left", "delete_user_account"),
    ("save all my notes as a JSON file", "export_note"),
    ("fetch product 77 from the catalog", "get_product"),
    ("how many documents are in my drive", "count_file"),
    ("send the invoice to the accountant", "share_invoice"),
    ("page through all the recipes", "list_recipe"),
    ("change the title of the support request", "update_ticket"),
]


def make_tools(calls: list[tuple[str, dict[str, Any]]] | None = None) -> list[Tool]:
    """The 300 tools; each records its call in ``calls`` and says it did its work."""
    tools = []
    for one, many, what in THINGS:
        label = one.replace("_", " ")
        for action, text, params in ACTIONS:
            name = f"{action}_{one}"

            def run(_name: str = name, **kwargs: Any) -> str:
                if calls is not None:
                    calls.append((_name, kwargs))
                return f"{_name} done"

            props = {p: {"type": "string", "description": d} for p, d in params.items()}
            said = f"{text.format(one=label, many=many)} {many.capitalize()}: {what}."
            tools.append(Tool(
                name=name, description=said,
                input_schema={"type": "object", "properties": props,
                              "required": list(params)[:1]},
                fn=run))
    return tools
