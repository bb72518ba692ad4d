"""The words of steering, in the languages on-call engineers write in the thread.

Each list is a set of regex fragments matched on a reply's plain lowercase words
(`text.prepare`). English first, then Spanish, German, French and Portuguese for the common
kinds. A phrase belongs here, not in the reader, so adding a language or a phrasing touches
one table.
"""

from __future__ import annotations

import re


def _any(*phrases: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])(?:" + "|".join(phrases) + r")(?![\w-])", re.I)


NEGATION = _any(r"don'?t", r"do not", r"dont", r"never", r"no need to", r"not", r"no",
                r"stop", r"quit", r"no (?:mires|revises|toques|uses)", r"nicht", r"kein\w*",
                r"ne", r"pas", r"não", r"nao", r"sem", r"sin", r"ohne", r"sans", r"without")

EXCLUDE = _any(
    r"stop (?:calling|hitting|running)", r"ban", r"kein\w* (?:\w+ )?mehr", r"sem", r"sin",
    r"ohne", r"sans", r"without", r"lay off(?: the)?", r"no more", r"drop",
    r"olv[ií]da(?:te)?(?: de)?", r"sors de", r"sal de",
    r"nicht (?:mehr )?(?:benutzen|verwenden|nutzen)",
    r"ne (?:regarde|touche|consulte) (?:plus|pas)", r"skipp\w*", r"pula", r"pule",
    r"stay (?:out of|away from|clear of)", r"keep (?:out of|away from)", r"get out of",
    r"(?:don'?t|do not|dont|never|no need to)\s+(?:bother\s+(?:with|looking at)|look(?:ing)?"
    r"(?: at| in| into)?|touch|query|go (?:into|near)|check|dig into|investigate|read|use|"
    r"pull|search|waste time on|spend time on)",
    r"stop (?:looking at|looking into|checking|querying|reading|using|digging into|"
    r"investigating|searching)", r"skip(?:ping)?", r"exclude", r"avoid", r"ignore", r"ignoring",
    r"disregard", r"forget(?: about)?", r"drop", r"leave(?: out)?", r"leave \S+ alone",
    r"hands off", r"out of scope", r"off[- ]limits", r"not in", r"outside of", r"except",
    r"no more", r"enough (?:of|with)", r"(?:is|are) (?:irrelevant|not relevant)",
    r"doesn'?t matter", r"don'?t run", r"not useful",
    # es
    r"no (?:mires|toques|revises|uses|busques|consultes|investigues)", r"ignora", r"evita",
    r"excluye", r"olvida(?:te de)?", r"sal de", r"fuera de", r"deja(?: de mirar| de revisar)?",
    r"sin tocar",
    # de
    r"ignorier\w*", r"lass(?: die finger von)?", r"finger weg von", r"überspring\w*",
    r"schau (?:nicht|dir nicht)", r"nicht (?:in|an|bei)", r"raus aus", r"vermeide",
    r"hör auf (?:mit|zu)",
    # fr
    r"ne (?:regarde|touche|consulte|cherche|vérifie|fouille|utilise) pas", r"n'utilise[sz]? pas",
    r"évite", r"exclus",
    r"laisse(?: tomber)?", r"oublie", r"arrête de (?:regarder|chercher|consulter)",
    # pt
    r"não (?:olhe|olha|mexa|mexe|consulte|verifique|use|toque)", r"ignore", r"evite",
    r"exclua", r"esquece", r"deixa de lado", r"pare de (?:olhar|verificar|usar)",
)

FOCUS = _any(
    r"go (?:with|to|for|by)", r"stay (?:in|within|inside|on)", r"only in", r"nimm", r"usa",
    r"utilise", r"prends", r"use", r"(?:it )?(?:could|might|may) be", r"i suspect", r"suspect",
    r"don'?t (?:skip|ignore|exclude|forget)", r"schau dir", r"regarde", r"olha", r"plut[oô]t",
    r"focus(?:ing)? (?:on|only on)", r"concentrate on", r"look (?:only )?(?:at|into|in)",
    r"only (?:look at|check)", r"check(?: out)?", r"dig (?:into|in)", r"zoom (?:in )?on",
    r"prioriti[sz]e", r"start with", r"start by checking", r"go (?:look at|check)",
    r"investigate", r"pull(?: up)?", r"query", r"take a look at", r"have a look at",
    r"what about", r"how about", r"try", r"switch to", r"use", r"stick to", r"only",
    r"instead", r"rather", r"the culprit is probably", r"more likely",
    # es
    r"c[eé]ntrate en", r"enf[oó]cate en", r"conc[eé]ntrate en", r"mira", r"revisa",
    r"chequea", r"investiga", r"solo", r"sólo",
    # de
    r"konzentrier\w* (?:dich )?auf", r"schau (?:dir )?(?:mal )?(?:die |den |das )?",
    r"schau(?:t)? (?:auf|in|nach)", r"prüf\w*", r"checken", r"checke", r"checkt", r"nur",
    r"guck\w*",
    # fr
    r"concentre[- ]toi sur", r"focalise[- ]toi sur", r"regarde", r"vérifie", r"seulement",
    # pt
    r"foca(?:r)? (?:em|no|na)", r"foque (?:em|no|na)", r"concentre[- ]se (?:em|no|na)",
    r"olha", r"olhe", r"verifica", r"verifique", r"só",
)

RULE_OUT = _any(
    r"i don'?t think it'?s", r"doubt it'?s", r"kein", r"keine", r"ist es nicht",
    r"c'est pas [çc]a", r"pas [çc]a",
    r"it'?s not", r"it is not", r"its not", r"isn'?t", r"is not", r"wasn'?t", r"was not",
    r"not (?:the|a|an)", r"rule(?:d)? out", r"(?:is|are|looks?|seems?) (?:fine|ok|okay|"
    r"healthy|good|green|normal|clean|unrelated|innocent)", r"not (?:related|the cause|"
    r"the problem|the issue|it)", r"red herring", r"can'?t be", r"cannot be", r"excluded",
    r"has been checked", r"we checked",
    # es
    r"no es", r"no son", r"descarta\w*", r"est[aá] bien",
    # de
    r"es ist nicht", r"ist nicht", r"nicht (?:der|die|das)", r"ist (?:ok|in ordnung|okay)",
    r"schlie(?:ß|ss) \S+ aus", r"ausgeschlossen",
    # fr
    r"ce n'est pas", r"c'est pas", r"n'est pas", r"pas (?:le|la|les|l')", r"va bien",
    r"écarte\w*", r"c'est exclu",
    # pt
    r"não é", r"nao é", r"não são", r"está ok", r"descart\w*",
)

STOP = re.compile(
    r"^(?:ok(?:ay)?|please|pls|plz|alright|right|thanks|ty|thx|guys|bot|triage|hey)?[\s,]*"
    r"(?:stop(?: now| it| here| investigating| the investigation| please| pls)*|"
    r"(?:you can|please|pls) stop(?: now| here| investigating)?|halt|abort|cancel(?: it| that)?"
    r"|that'?s enough|enough|wrap(?: it)? up|conclude(?: now)?|call it|kill it|we'?re done|"
    r"done here|give (?:me|us) what you (?:have|got)|finish(?: up| now)?|end (?:it|the "
    r"investigation)|"
    # es, de, fr, pt
    r"para(?: ya)?|det[eé]nte|basta(?: ya)?|stopp?|h[öo]r auf|aufh[öo]ren|abbrechen|arr[êe]te"
    r"(?:-toi| tout)?|pare|chega)(?:\s+(?:now|please|pls|ya|bitte|s'il te plaît|por favor|"
    r"agora|maintenant|jetzt|sofort|thanks|thx|we found it|found it|là|ici|ahí|aquí|hier))*"
    r"[\s!.]*$",
    re.I,
)
# Stop said inside a longer clause ("stop & conclude", "just tell us what you have").
STOP_ANYWHERE = _any(
    r"stop (?:and|&) (?:conclude|summari[sz]e|write)", r"write (?:it|this) up",
    r"(?:just )?tell (?:us|me) what you (?:have|got|found)", r"we have enough",
    r"conclude (?:now|already)", r"wrap (?:it )?up", r"det[eé]n la investigaci[oó]n",
    r"para la investigaci[oó]n", r"arr[êe]te l'enqu[êe]te", r"pode parar", r"pare a investiga\w+",
    r"stopp(?:e)? die (?:untersuchung|analyse)", r"hör auf zu (?:suchen|untersuchen)",
    r"(?:kill|stop|end|cancel|abort) the investigation", r"parar", r"pode parar", r"para tudo",
)
# "don't conclude yet": hold on, the opposite of a stop.
PAUSE_STRONG = _any(
    r"don'?t (?:wrap up|conclude|finish|submit)(?: \w+)?(?: yet| until)?", r"not yet",
    r"give me \d+ ?(?:min|mins|minutes|sec|secs|seconds)", r"hold up", r"halt mal",
    r"hold off", r"hold on until", r"wait (?:for me|until)",
    r"noch nichts abschlie(?:ß|ss)en", r"no concluyas", r"ne conclus pas", r"não conclua",
)
NOT_STOP = _any(r"no need to (?:pause|stop|wait)", r"don'?t (?:pause|wait)", r"don'?t stop",
                r"do not stop", r"keep going", r"carry on", r"go on",
                r"keep (?:digging|looking|investigating|at it)",
                r"continue", r"resume", r"proceed", r"sigue", r"weiter\w*", r"continu\w*")

PAUSE = _any(
    r"hold on", r"hold off", r"hang on", r"wait(?: a (?:sec|second|moment|minute|min))?",
    r"pause", r"one (?:sec|second|moment|min)", r"give me a (?:sec|second|minute|min)",
    r"don'?t do anything (?:yet|until)", r"espera", r"un momento", r"warte\w*",
    r"moment mal", r"attends", r"pausa", r"aguarda", r"aguarde",
)

WRITES = _any(
    r"(?:nobody|no one|no-one) (?:restarts|touches|changes|deletes|scales)",
    r"ne (?:redémarre|redemarre|relance|supprime|modifie|change)\b", r"não mexe(?: em nada)?",
    r"só leitura", r"so leitura",
    r"read[- ]only", r"no (?:\w+ )?writes?", r"no changes", r"no (?:restarts|rollbacks|scaling)",
    r"(?:don'?t|do not|dont|never|no)\s+(?:make any |make )?(?:change|changes|modify|restart|"
    r"scale|delete|roll ?back|rollback|kill|patch|apply|edit|drain|cordon|redeploy|bounce|"
    r"touch anything|mutate|write|flush|evict|uncordon)", r"(?:don'?t|do not) touch(?= *$)",
    r"hands off the cluster", r"look but don'?t touch", r"observe only",
    # es, de, fr, pt
    r"no (?:toques|cambies|modifiques|reinicies|borres) nada", r"no reinicies",
    r"solo lectura", r"nichts (?:ändern|anfassen|neu starten)", r"keine änderungen",
    r"nicht neu starten", r"nur lesen", r"ne (?:change|modifie|redémarre|touche) rien",
    r"aucune modification", r"lecture seule", r"não (?:altere|mude|reinicie|mexa em) nada",
    r"não reinicie", r"somente leitura", r"sem alterações",
)

# What a reply states about the world without a marker: a fact when said alone, the reason
# of an instruction when said beside one ("skip logs, fluent-bit has been dropping lines").
FACT_WEAK = _any(
    r"maintenance", r"on a \w+[ée]\b",
    r"(?:keeps?|kept) getting", r"(?:is|are) at \d", r"maxed out", r"pegged",
    r"(?:expired|rotated|finished|synced|flipped|triggered|started|crashed|failed|dropped) "
    r"(?:at|around|since|back|right|the|a|\d)",
)
FACT = _any(
    r"fwiw", r"btw", r"for what it'?s worth", r"\w+ed (?:at|around|since) \d",
    r"(?:went|hit|rose|fell|dropped|spiked|jumped|kicked off|began|broke) .*\d{1,2}:\d{2}",
    r"subimos", r"hemos desplegado", r"desplegaron", r"on a (?:mis|poussé|livré)",
    r"nous avons", r"fizemos", r"subimos",
    r"we (?:just )?(?:deployed|rolled|shipped|released|pushed|upgraded|migrated|changed|"
    r"rotated|scaled|restarted|merged|bumped|updated|enabled|disabled|added|removed|had|"
    r"moved|switched|reverted|patched)", r"(?:was|were|got|has been|have been) (?:deployed|"
    r"upgraded|rolled|restarted|scaled|migrated|rotated|changed|updated|patched|drained|"
    r"cordoned|rebooted|replaced|moved|reverted)", r"(?:is|are) (?:managed|owned|run) by",
    r"fyi", r"heads up", r"for context", r"note that", r"there was an?", r"happened",
    r"known issue", r"hinweis", r"wird \w+ verwaltet",
    r"(?:we'?re |i'?m )?(?:rolling back|rolling out|restarting|redeploying|failing over|"
    r"draining) \S+", r"deploy(?:ed)? at",
    r"went out at", r"started at", r"began at", r"we'?ve had", r"confirm(?:s|ed)",
    r"is real", r"(?:is|are) (?:planned|intended|normal at night)",
    # es, de, fr, pt
    r"desplegamos", r"hicimos (?:un )?deploy", r"actualizamos", r"wurde",
    r"on a (?:déployé|mis à jour|redémarré)", r"nous avons", r"fizemos", r"atualizamos",
)

# A clause opening with one of these asks about the investigation; it gives no instruction.
WH_START = re.compile(
    r"^(?:why|what(?! about)|how(?! about)|when(?! you)|which|where|is this|is it|are you sure|"
    r"summari[sz]e what you|give (?:me|us) a summary|"
    r"por ?qu[eé]|qu[eé]|c[oó]mo|cu[aá]ndo|warum|wieso|weshalb|was|wie|welche|pourquoi|"
    r"qu'est-ce|quoi|comment|o que|por que|porque|como|qual|t'as|as-tu|hast du|"
    r"has (?:\w+ado|\w+ido|visto|hecho))\b", re.I)
CHATTER_START = re.compile(
    r"^(?:i'?m|i am|i'?ll|i will|i was|we'?re|we are|i see|je |j'|ich |yo |eu |estoy|estou|"
    r"can someone|could someone|someone|anyone|who can|who'?s|who is|who owns|status page|"
    r"merci|gracias|danke|obrigad|looking|checking|that'?s what i (?:see|get)|does anyone|"
    r"do any of you|alguien|jemand|quelqu'un|alguém|i (?:checked|looked|saw|verified|"
    r"confirmed|already checked))", re.I)
# A request said as a question ("can you skip kube-system?") is an instruction.
REQUEST_PREFIX = re.compile(
    r"^(?:can|could|would|will) (?:you|u) (?!even|see|tell|explain|access|read|show me what)"
    r"(?:please |pls )?|^(?:please|pls|plz) |^(?:can|could) we (?:get|have|use) |"
    r"^any chance (?:you )?(?:can|could) |"
    r"^(?:kannst|könntest) du |^(?:peux|pourrais)[- ]tu |^(?:puedes|podrías) |^(?:pode|podes) ",
    re.I)
POLITENESS = re.compile(
    r"^(?:please|pls|plz|por favor|bitte|s'il te pla[iî]t|s'il vous pla[iî]t|stp|svp|thanks|"
    r"thx|ty|merci|gracias|danke|obrigad[oa]|cheers|asap|now|for now|for a bit|please don'?t|"
    r"don'?t)$", re.I)
QUESTION_START = _any(
    r"what", r"why", r"how", r"when", r"which", r"where", r"who", r"did you", r"have you",
    r"are you", r"is it", r"can you (?:tell|explain|show|summari[sz]e|share)", r"any (?:progress|"
    r"update|news|luck|findings)", r"status\??$", r"so far",
    r"qu[eé]", r"por qu[eé]", r"c[oó]mo", r"cu[aá]l", r"was", r"warum", r"wieso", r"wie",
    r"welche", r"quoi", r"pourquoi", r"comment", r"qu'est-ce", r"o que", r"por que", r"como",
    r"qual",
)

ACKNOWLEDGE = _any(
    r"thanks?", r"thank you", r"thx", r"ty", r"ok(?:ay)?", r"k", r"kk", r"cool", r"nice",
    r"great", r"got it", r"on it", r"ack", r"roger", r"lgtm", r"\+1", r"same", r"agreed",
    r"yep", r"yes", r"yeah", r"sure", r"np", r"no worries", r"looking", r"i'?m looking",
    r"checking", r"i'?ll check", r"joining", r"here", r"brb", r"lol", r"gracias", r"danke",
    r"merci", r"obrigad[oa]", r"vale", r"d'accord", r"genau", r"claro",
)

IMPERATIVE = _any(
    r"in the summary", r"summar(?:y|ies)", r"r[ée]sum[ée]", r"resumen", r"zusammenfassung",
    r"responde", r"r[ée]ponds", r"antworte", r"fais", r"haz", r"faz", r"escreve", r"schreib",
    r"please", r"pls", r"plz", r"make sure",
    r"always (?:use|include|answer|post|write|check|tell|start|give|put|add|show)", r"answer",
    r"reply", r"respond",
    r"use", r"include", r"cc", r"post", r"write", r"tell", r"report", r"keep", r"mention",
    r"put", r"send", r"show", r"list", r"add", r"give", r"summari[sz]e", r"format",
    r"let me know", r"ping", r"notify", r"be", r"assume", r"remember", r"consider",
    r"por favor", r"bitte", r"s'il te plaît", r"stp",
)

# Data sources by the words people use for them.
SOURCE_WORDS: dict[str, re.Pattern[str]] = {
    "logs": _any(r"logs?", r"log lines", r"logging", r"elasticsearch", r"elastic", r"kibana",
                 r"opensearch", r"registros", r"journaux", r"protokolle"),
    "metrics": _any(r"metrics?", r"prometheus", r"prom", r"grafana", r"dashboards?",
                    r"promql", r"graphs?", r"m[ée]tricas?", r"metriken", r"m[ée]triques"),
    "cluster": _any(r"cluster state", r"kubectl", r"k8s api", r"kubernetes api", r"the api",
                    r"k8s side", r"kubernetes side", r"the pods", r"pods and events",
                    r"api server", r"k8s events", r"kube events", r"events", r"pod status",
                    r"kubectl stuff", r"eventos", r"ereignisse", r"événements", r"evenements"),
}

# Kinds of fault, for "it's not X": each category by the words that name it.
CATEGORY_WORDS: dict[str, re.Pattern[str]] = {
    "oom_killed": _any(r"oom\w*", r"out of memory", r"memory", r"mem", r"memoria", r"speicher",
                       r"mémoire", r"memória"),
    "crash_loop": _any(r"crash ?loop\w*", r"crashing", r"crashes", r"a crash"),
    "image_pull": _any(r"image ?pull\w*", r"errimagepull", r"the image", r"registry",
                       r"image"),
    "unschedulable": _any(r"scheduling", r"unschedulable", r"the scheduler", r"pending pods"),
    "probe_failure": _any(r"probes?", r"liveness", r"readiness", r"health ?checks?"),
    "node_failure": _any(r"nodes?", r"node failure", r"kubelet", r"the host", r"nodo",
                         r"noeud", r"nœud"),
    "bad_rollout": _any(r"deploy", r"the deploy(?:ment)?", r"rollout", r"roll-out",
                        r"release", r"the new version", r"the last deploy", r"bad rollout",
                        r"despliegue", r"déploiement", r"deployment"),
    "dependency_failure": _any(r"dependency", r"dependencies", r"downstream", r"upstream",
                               r"third[- ]party"),
    "resource_exhaustion": _any(r"disk(?: space)?", r"disk full", r"storage", r"volume",
                                r"pvc", r"connection pool", r"file descriptors",
                                r"resource exhaustion"),
    "cpu_throttling": _any(r"cpu(?: throttling)?", r"throttling", r"throttled"),
    "network": _any(r"network(?:ing)?", r"network ?polic(?:y|ies)", r"netpol", r"firewall",
                    r"la red", r"netzwerk", r"réseau", r"a rede"),
    "certificate": _any(r"certs?", r"certificates?", r"tls", r"ssl", r"certificado",
                        r"zertifikat\w*", r"certificat"),
    "quota_exceeded": _any(r"quotas?", r"resource ?quotas?"),
    "autoscaling_limit": _any(r"hpa", r"autoscal\w*", r"scaling limits?", r"max replicas"),
}

# Components that are not workloads of the cluster, by their canonical singular noun.
COMPONENT_WORDS: dict[str, re.Pattern[str]] = {
    "database": _any(r"databases?", r"dbs?", r"the db", r"base de datos", r"datenbank",
                     r"base de données", r"banco(?: de dados)?", r"bd"),
    "dns": _any(r"dns", r"coredns", r"kube-dns"),
    "cache": _any(r"cache", r"caching"),
    "load balancer": _any(r"load ?balancers?", r"lb", r"elb", r"alb"),
    "ingress": _any(r"ingress(?:es)?", r"ingress controller"),
    "queue": _any(r"queues?", r"broker"),
    "redis": _any(r"redis"),
    "kafka": _any(r"kafka"),
    "postgres": _any(r"postgres(?:ql)?", r"pg"),
    "mysql": _any(r"mysql"),
    "vault": _any(r"vault"),
    "cdn": _any(r"cdn"),
}

# Nouns that turn a name into a signal: "the redis warnings" is about warnings, not redis.
SIGNAL_NOUNS = _any(r"warnings?", r"errors?", r"alerts?", r"noise", r"messages?",
                    r"spikes?", r"timeouts?", r"retries", r"restarts?", r"flaps?",
                    r"flapping", r"warns?", r"logs?", r"pages?", r"avisos", r"warnungen",
                    r"fehler", r"alertes", r"erreurs", r"alertas")
