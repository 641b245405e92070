"""The benchmarks' shared workload and the line that names the machine, importing nothing of
the app: ``gpu.py`` runs where only the engine's imports are installed."""

from __future__ import annotations

import os
import platform
from pathlib import Path

# B's one-line support messages: (text, source, target).
MESSAGES: list[tuple[str, str, str]] = [
    ("Bonjour, ma commande n'est toujours pas arrivée.", "fr", "en"),
    ("Hallo, wann wird mein Paket geliefert?", "de", "en"),
    ("Hola, ¿puedo cambiar la dirección de envío?", "es", "en"),
    ("Buongiorno, vorrei annullare il mio ordine.", "it", "en"),
    ("Olá, recebi o produto errado.", "pt", "fr"),
    ("Здравствуйте, я не получил чек.", "ru", "en"),
    ("您好，我想查询一下物流状态。", "zh", "en"),
    ("Thank you, the problem is solved now.", "en", "fr"),
    ("Goedendag, mijn pakket is beschadigd.", "nl", "en"),
    ("Dzień dobry, nie mogę się zalogować.", "pl", "fr"),
]
WARM_UP = ("こんにちは、返品はできますか？", "ja", "en")  # not measured

# A's document: subject x predicate x ending gives 100 distinct lines of 60-120 characters.
SUBJECTS = ["Le client", "Notre équipe technique", "La facture du mois dernier",
            "Le service de livraison", "La nouvelle version du logiciel", "Le responsable du stock",
            "Le contrat de maintenance", "Notre centre d'appels", "La direction régionale",
            "Le fournisseur principal"]
PREDICATES = ["doit être vérifié avant la fin de la semaine prochaine",
              "a signalé un retard important sur les commandes urgentes",
              "sera présenté aux partenaires lors de la réunion de lundi",
              "nécessite une validation écrite du service juridique",
              "a été mis à jour selon les remarques reçues en mars"]
ENDINGS = [".", ", comme convenu hier."]


def document(lines: int) -> str:
    return "\n".join(f"{SUBJECTS[i % 10]} {PREDICATES[i // 10 % 5]}{ENDINGS[i // 50 % 2]}"
                     for i in range(lines))


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kib / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    load = f", load average at start {os.getloadavg()[0]:.2f}"
    return (f"{cpu}, {os.cpu_count()} cores{mem}; {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}{load}")
